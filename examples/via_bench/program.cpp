#include "via_bench/program.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "bench/format.hpp"
#include "bench/json.hpp"
#include "bench/output.hpp"
#include "bench/peer.hpp"
#include "bench/process_pair.hpp"
#include "bench/session.hpp"
#include "bench/start_signal.hpp"
#include "via_bench/peer.hpp"

namespace via_bench {
namespace {

using Clock = std::chrono::steady_clock;

void print_header(const Program& p, const Options& o, const Results& r) {
  const auto& m = r.machine;
  std::printf("# %s\n\n", p.title);
  bench::Table t({{"", "", false}, {"", "", false}});
  t.add({"date", m.date_utc});
  t.add({"CPU", m.cpu_model});
  t.add({"cores", std::to_string(m.cores_online) + " online, " + std::to_string(m.cores_allowed) + " allowed"});
  t.add({"kernel", m.kernel + ", clocksource " + m.clocksource});
  t.add({"pinned", r.pinned ? "yes: A (client, sender) on the 1st allowed CPU, B (server, receiver) on the 2nd; DMA "
                              "engine threads unpinned. Same for VIA and the raw DMQ"
                            : (o.pin ? "requested but not possible" : "no (--no-pin)")});
  t.add({"spin budget", std::to_string(r.spin_ns) + " ns" + bench::spin_budget_source(o.spin_ns) +
                            ", then futex sleep; the same for every NIC of both processes (VIA and raw DMQ)"});
  t.add({"processes", "two (fork, NICs opened after fork); reliable delivery; RevokeOnCompletion on (receive "
                      "buffers share an allocation, so no cookie is reissued)"});
  t.add({"mode", std::string(o.quick ? "--quick" : "default") + "; clock overhead " +
                     bench::fmt("%.0f", r.clock_ns) + " ns per timestamp; " + std::to_string(r.connections) +
                     " connections set up in " + bench::fmt("%.0f", r.connect_ms) + " ms"});
  std::printf("%s\n", t.markdown().c_str());
}

bench::Record config(const Program& p, const Options& o, const Results& r) {
  bench::Record c = {{"pinned", bench::Value::boolean(r.pinned)},
                     {"spin_budget_ns", r.spin_ns},
                     {"clock_overhead_ns", r.clock_ns},
                     {"recv_buffers", kRecvBuffers},
                     {"reliability", "reliable_delivery"}};
  for (auto& kv : p.config(o)) c.push_back(kv);
  c.emplace_back("quick", bench::Value::boolean(o.quick));
  return c;
}

bool write_outputs(const Program& p, const Options& o, const Results& r, const bench::Verdicts& v) {
  bench::Record doc = {{"benchmark", p.stem},
                       {"machine", bench::Value::json(bench::json_machine(r.machine))},
                       {"config", bench::Value::json(bench::json_object(config(p, o, r)))}};
  for (auto& kv : p.json(r)) doc.push_back(kv);
  doc.emplace_back("targets", bench::Value::json(v.json()));
  const std::string stem = p.stem;
  return bench::write_file(o.out, stem + ".csv", p.csv(r).csv()) &&
         bench::write_file(o.out, stem + ".json", bench::json_document(doc));
}

Setup make_setup(const Program& p, const Options& o) {
  bench::make_runtime_dir("bench-via");
  const std::string pid = std::to_string(getpid());
  return Setup{"vbench-a-" + pid, "vbench-b-" + pid, o.pin, p.parts};
}

// Starts the pair, measures, and ends the peer; returns its exit code.
int measure(const Program& p, const Options& o, const Setup& setup, Results& res) {
  const bench::StartSignal started;
  res.machine = bench::machine_info();
  bench::ProcessPair pair([&](bench::Channel ch) { return Peer(setup, std::move(ch), started).run(); });
  Driver drv(setup, pair.take_control(), started);
  std::fprintf(stderr, "[setup] opening NICs, connecting %zu VIs\n", setup.parts.connections());
  drv.set_up();
  res.spin_ns = drv.spin_ns();
  res.pinned = drv.pinned();
  res.connect_ms = drv.connect_ms();
  res.connections = setup.parts.connections();
  res.clock_ns = bench::clock_overhead_ns();
  const auto t_start = Clock::now();
  p.measure(o, drv, res);
  bench::arm_watchdog(30);
  drv.quit();
  const int code = pair.finish();
  std::fprintf(stderr, "[done] measured in %.1f s\n", std::chrono::duration<double>(Clock::now() - t_start).count());
  return code;
}

}  // namespace

int run(const Program& p, int argc, char** argv) {
  bench::set_program_name(p.name);
  const Options o = parse_options(argc, argv, p.cq_conns_option);
  bench::require_targets(p.target_ids);
  signal(SIGPIPE, SIG_IGN);
  bench::apply_spin_budget(o.spin_ns);
  const Setup setup = make_setup(p, o);
  Results res;
  const int code = measure(p, o, setup, res);

  print_header(p, o, res);
  p.print(o, res);
  bench::Verdicts v;
  p.verdicts(res, v);
  if (!v.empty()) std::printf("\n## Targets\n\n%s", v.table().markdown().c_str());
  std::fflush(stdout);
  if (!o.out.empty()) {
    if (!write_outputs(p, o, res, v)) return 1;
    std::fprintf(stderr, "%s: results in %s/%s.csv, %s.json\n", p.name, o.out.c_str(), p.stem, p.stem);
  }
  return code == 0 ? 0 : 1;
}

}  // namespace via_bench
