// bench_fabric_pingpong: single-word round trips on the emulated CLAN NIC
// between two real processes (paper 000 sect. 3.2), with the floors measured
// in the same run, alternated A B C A B C:
//   - PIO: Aperture::write_word into the peer's memory, waited for with
//     Tripwire::wait, and echoed back the same way;
//   - a bare cache-line ping-pong: two std::atomic<uint64_t> in a MAP_SHARED
//     page, no clan_emul (the floor);
//   - a Unix-domain socketpair ping-pong of 8 bytes.
//
// Usage: bench_fabric_pingpong [--quick] [--roundtrips N] [--alternations N]
//                              [--spin-ns N] [--pin] [--out DIR]
// Tables go to stdout (Markdown), progress to stderr; --out DIR gets
// fabric_latency.csv and fabric_pingpong.json. Targets (examples/targets.tsv)
// are reported, never asserted: the exit status is non-zero only when
// something failed.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/format.hpp"
#include "bench/machine.hpp"
#include "bench/peer.hpp"
#include "fabric_bench/pingpong.hpp"
#include "fabric_bench/pingpong_report.hpp"
#include "fabric_bench/program.hpp"

namespace {

using namespace fabric_bench;

struct Options {
  bench::CommonOptions common;
  uint64_t roundtrips = 100000;  // per transport, over all alternations
  int alternations = 5;
};

[[noreturn]] void usage(const char* argv0) {
  print_usage(argv0, "[--quick] [--roundtrips N] [--alternations N] [--spin-ns N] [--pin] [--out DIR]");
}

Options parse(int argc, char** argv) {
  Options o;
  bool rt = false;
  parse_options(argc, argv, o.common, usage, [&](const std::string& a, int& i) {
    if (a == "--roundtrips") o.roundtrips = static_cast<uint64_t>(option_number(argc, argv, i, usage)), rt = true;
    else if (a == "--alternations") o.alternations = static_cast<int>(option_number(argc, argv, i, usage));
    else return false;
    return true;
  });
  if (o.common.quick && !rt) o.roundtrips = 10000;
  o.alternations = std::max(o.alternations, 1);
  o.roundtrips = std::max<uint64_t>(o.roundtrips, static_cast<uint64_t>(o.alternations));
  return o;
}

// One alternation: a block of each transport, in the same order every round.
void round_trips(PingDriver& drv, PingResults& res, int round) {
  bench::arm_watchdog(120);
  std::vector<uint64_t> p, b, u;
  p.reserve(res.block);
  b.reserve(res.block);
  u.reserve(res.block);
  res.pio.wakes += drv.pio_block(res.warm, res.block, p);
  drv.bare_block(res.warm, res.block, b);
  drv.unix_block(res.warm, res.block, u);
  res.pio.add_round(p);
  res.bare.add_round(b);
  res.unix_.add_round(u);
  const auto& sp = res.pio.per_round.back();
  const auto& sb = res.bare.per_round.back();
  const auto& su = res.unix_.per_round.back();
  std::fprintf(stderr, "[pingpong] %d/%d  p50 us: bare %s  pio %s  unix %s  (p99: %s %s %s)\n", round + 1,
               res.alternations, bench::us(sb.p50).c_str(), bench::us(sp.p50).c_str(), bench::us(su.p50).c_str(),
               bench::us(sb.p99).c_str(), bench::us(sp.p99).c_str(), bench::us(su.p99).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  PingResults res;
  FabricPair<PingShared, PingDriver> pair({"bench_fabric_pingpong", kPingTargets}, o.common, run_pingpong_peer, res);
  res.clock_ns = bench::clock_overhead_ns();
  res.alternations = o.alternations;
  res.block = o.roundtrips / static_cast<uint64_t>(o.alternations);
  res.warm = std::max<uint64_t>(100, res.block / 10);
  print_ping_header(o.common, res);
  for (int round = 0; round < o.alternations; ++round) round_trips(pair.driver(), res, round);
  return pair.end({[&] { print_ping_tables(res); }, [&] { return write_ping_results(o.common, res); },
                   "fabric_latency.csv, fabric_pingpong.json"});
}
