// bench_contention: a server under many clients with few NIC frames
// (paper 004 sect. 6.4, Figs. 6-7; examples/DESIGN.md, "The contention
// benchmark"). One server process and 1 to 64 client processes, each client
// a continuous stream of requests (one outstanding) over a DmqConnection,
// 16-byte and 8 KiB requests, 16-byte replies. The server is built as
// OneVN (one endpoint shared by every connection, one thread over an event
// queue), ST (an endpoint per connection, one thread over an event queue)
// or MT (an endpoint and a thread per connection), on a NIC of 8 or 96
// frames, evicting by LRU or at random; the fixed-resource build is MT over
// bare queues with no endpoint. Reported: per-client replies/s (min,
// median, max), aggregate, and the server's re-mappings per second.
//
// Waiters sleep at once (spin budget 0) unless --spin-ns or CLAN_SPIN_NS
// says otherwise.
//
// Usage: bench_contention [--quick] [--max-clients N] [--sizes small|bulk|both]
//                         [--warm-ms N] [--ms N] [--reps N] [--spin-ns N] [--out DIR]
// Tables go to stdout (Markdown), progress to stderr; --out DIR gets
// contention.csv and contention.json. The targets (examples/targets.tsv)
// are reported, never asserted: the exit status is non-zero only when a
// point failed. Each point runs --reps times (default 3), the repetitions
// alternated, and the repetition with the median aggregate is reported.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/machine.hpp"
#include "bench/options.hpp"
#include "bench/peer.hpp"
#include "bench/session.hpp"
#include "bench/targets.hpp"
#include "clan_emul/nic.hpp"
#include "contention/report.hpp"
#include "contention/run_point.hpp"

namespace {

using contention::Config;
using contention::PointSpec;

struct Options {
  bench::CommonOptions common;
  contention::Timing timing{500, 1500};
  uint32_t max_clients = 64;
  int reps = 3;
  std::vector<uint32_t> sizes = {16, 8192};
  std::string spin_source;  // where the spin budget comes from, as printed
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--quick] [--max-clients N] [--sizes small|bulk|both] [--warm-ms N] [--ms N] "
               "[--reps N] [--spin-ns N] [--out DIR]\n",
               argv0);
  std::exit(2);
}

int number(int argc, char** argv, int& i) {
  if (i + 1 >= argc) usage(argv[0]);
  char* end = nullptr;
  const long v = std::strtol(argv[++i], &end, 10);
  if (!end || *end || v < 1 || v > 600000) usage(argv[0]);
  return static_cast<int>(v);
}

Options parse(int argc, char** argv) {
  Options o;
  bool warm = false, ms = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (bench::take_common_option(argc, argv, i, o.common, usage)) continue;
    if (a == "--max-clients") o.max_clients = static_cast<uint32_t>(number(argc, argv, i));
    else if (a == "--warm-ms") o.timing.warm_ms = number(argc, argv, i), warm = true;
    else if (a == "--ms") o.timing.measure_ms = number(argc, argv, i), ms = true;
    else if (a == "--reps") o.reps = number(argc, argv, i);
    else if (a == "--sizes" && i + 1 < argc) {
      const std::string s = argv[++i];
      if (s == "small") o.sizes = {16};
      else if (s == "bulk") o.sizes = {8192};
      else if (s != "both") usage(argv[0]);
    } else usage(argv[0]);
  }
  // Waiters sleep at once unless told otherwise: 65 processes on a few
  // cores leave no room for spinning, and paper 004's servers wait on
  // events (sect. 3.3).
  o.spin_source = bench::spin_budget_source(o.common.spin_ns);
  if (o.common.spin_ns < 0) {
    const char* env = std::getenv("CLAN_SPIN_NS");
    o.common.spin_ns = env ? std::strtoll(env, nullptr, 10) : 0;
    if (!env) o.spin_source = " (bench_contention default)";
  }
  if (o.common.quick) {
    if (!warm) o.timing.warm_ms = 100;
    if (!ms) o.timing.measure_ms = 300;
  }
  return o;
}

std::vector<uint32_t> client_counts(const Options& o) {
  const std::vector<uint32_t> all =
      o.common.quick ? std::vector<uint32_t>{1, 8, 16, 64} : std::vector<uint32_t>{1, 2, 4, 8, 16, 32, 64};
  std::vector<uint32_t> out;
  for (uint32_t n : all)
    if (n <= o.max_clients) out.push_back(n);
  return out;
}

// The series of one size and client count, in the order they run: the
// configurations alternated so that drift on the shared machine spreads
// over all of them. The replacement policy is measured both ways only
// where endpoints outnumber the frames.
std::vector<PointSpec> series(const Options& o, uint32_t size, uint32_t clients) {
  std::vector<PointSpec> out;
  auto add = [&](Config c, uint32_t frames, clan::Replacement r) {
    out.push_back(PointSpec{c, frames, r, clients, size, o.common.spin_ns});
  };
  const clan::Replacement deflt = clan::NicConfig{}.replacement;
  add(Config::kOneVn, 96, deflt);
  for (Config c : {Config::kSt, Config::kMt}) {
    if (clients > 8) {
      add(c, 8, clan::Replacement::kLru);
      add(c, 8, clan::Replacement::kRandom);
    } else {
      add(c, 8, deflt);
    }
    add(c, 96, deflt);
  }
  add(Config::kFixed, 96, deflt);
  return out;
}

std::vector<PointSpec> all_specs(const Options& o) {
  std::vector<PointSpec> out;
  for (uint32_t size : o.sizes)
    for (uint32_t clients : client_counts(o))
      for (const PointSpec& s : series(o, size, clients)) out.push_back(s);
  return out;
}

void progress(int rep, int reps, const contention::PointResult& r) {
  const PointSpec& s = r.spec;
  std::fprintf(stderr, "[contention] rep %d/%d %-5s frames %2u %-6s %5u B %2u clients: %9.0f msg/s, min %7.0f, "
               "%6.0f remaps/s%s%s\n",
               rep + 1, reps, contention::to_string(s.config), s.frames, clan::to_string(s.replacement), s.size,
               s.clients, r.aggregate(), r.min_rate(), r.remaps_per_s(), r.error.empty() ? "" : " FAILED: ",
               r.error.c_str());
}

// Every point, --reps times, the repetitions alternated (all points, then
// all again) so that drift on the shared machine spreads over all of them;
// each point's median repetition. False when a point failed.
bool measure(const Options& o, std::vector<contention::PointResult>& results) {
  const std::vector<PointSpec> specs = all_specs(o);
  std::vector<std::vector<contention::PointResult>> runs(specs.size());
  bool ok = true;
  for (int rep = 0; rep < o.reps && ok; ++rep) {
    for (size_t i = 0; i < specs.size() && ok; ++i) {
      bench::arm_watchdog(static_cast<unsigned>((o.timing.warm_ms + o.timing.measure_ms) / 1000 + 300));
      runs[i].push_back(contention::run_point(specs[i], o.timing));
      progress(rep, o.reps, runs[i].back());
      ok = runs[i].back().error.empty();
    }
  }
  bench::disarm_watchdog();
  for (auto& r : runs)
    if (!r.empty()) results.push_back(contention::median_repetition(std::move(r)));
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  bench::set_program_name("bench_contention");
  const Options o = parse(argc, argv);
  bench::require_targets(contention::target_ids());
  signal(SIGPIPE, SIG_IGN);
  bench::apply_spin_budget(o.common.spin_ns);
  bench::make_runtime_dir("clan-contention");
  const bench::MachineInfo machine = bench::machine_info();
  std::vector<contention::PointResult> results;
  const bool ok = measure(o, results);
  bench::remove_runtime_dir();
  contention::print_tables(machine, o.timing, o.common.spin_ns, o.spin_source, results);
  if (!o.common.out.empty()) {
    if (!contention::write_outputs(o.common.out, machine, o.timing, results)) return 1;
    std::fprintf(stderr, "bench_contention: results in %s/contention.csv, contention.json\n", o.common.out.c_str());
  }
  return ok ? 0 : 1;
}
