// bench_fabric_stream: streaming bandwidth of the emulated CLAN NIC's DMQ
// between two real processes (paper 000 sect. 3.2, Fig. 3), by PIO and by
// DMA, against the floors measured in the same run: a Unix-domain
// SOCK_STREAM socketpair, a bare ring in shared memory, and single-thread
// memcpy. The sender writes every message's payload and the receiver reads
// every byte (a checksum verified at the end); the transports are
// alternated within each repetition.
//
// Usage: bench_fabric_stream [--quick] [--bw-mib N] [--bw-ms N] [--reps N]
//                            [--spin-ns N] [--pin] [--out DIR]
// Tables go to stdout (Markdown), progress to stderr; --out DIR gets
// fabric_bandwidth.csv and fabric_stream.json. Targets (examples/targets.tsv)
// are reported, never asserted: the exit status is non-zero only when
// something failed.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/format.hpp"
#include "bench/peer.hpp"
#include "fabric_bench/memcpy_bandwidth.hpp"
#include "fabric_bench/program.hpp"
#include "fabric_bench/stream.hpp"
#include "fabric_bench/stream_report.hpp"

namespace {

using namespace fabric_bench;

struct Options {
  bench::CommonOptions common;
  StreamSettings s;
};

[[noreturn]] void usage(const char* argv0) {
  print_usage(argv0, "[--quick] [--bw-mib N] [--bw-ms N] [--reps N] [--spin-ns N] [--pin] [--out DIR]");
}

Options parse(int argc, char** argv) {
  Options o;
  bool mib = false, ms = false, reps = false;
  parse_options(argc, argv, o.common, usage, [&](const std::string& a, int& i) {
    const long long v = a == "--bw-mib" || a == "--bw-ms" || a == "--reps" ? option_number(argc, argv, i, usage) : 0;
    if (a == "--bw-mib") o.s.bw_bytes = static_cast<uint64_t>(v) * kMiB, mib = true;
    else if (a == "--bw-ms") o.s.bw_seconds = static_cast<double>(v) / 1000.0, ms = true;
    else if (a == "--reps") o.s.reps = static_cast<int>(v), reps = true;
    else return false;
    return true;
  });
  if (o.common.quick) {
    if (!mib) o.s.bw_bytes = 4 * kMiB;
    if (!ms) o.s.bw_seconds = 0.05;
    if (!reps) o.s.reps = 1;
    o.s.pilot_seconds = 0.004;
    o.s.memcpy_seconds = 0.03;
  }
  o.s.reps = std::max(o.s.reps, 1);
  o.s.bw_bytes = std::max<uint64_t>(o.s.bw_bytes, 64 * 1024);
  return o;
}

constexpr StreamOp kOps[4] = {StreamOp::kPio, StreamOp::kDma, StreamOp::kUnix, StreamOp::kBare};

// The message count of a point: a pilot run, doubled until it lasts
// pilot_seconds (it also warms up), scaled to bw_seconds, at most bw_bytes.
uint64_t calibrate(StreamDriver& drv, const StreamSettings& s, StreamOp op, uint64_t size) {
  const uint64_t cap = std::max<uint64_t>(1, s.bw_bytes / size);
  for (uint64_t n = std::min<uint64_t>(cap, 256);; n = std::min(cap, n * 2)) {
    const BwPoint pilot = drv.stream(op, size, n);
    if (pilot.seconds >= s.pilot_seconds || n >= cap) {
      const double rate = static_cast<double>(n) / pilot.seconds;
      return std::clamp<uint64_t>(static_cast<uint64_t>(rate * s.bw_seconds), 1, cap);
    }
  }
}

// One size of one repetition: the memcpy references beside the 64 KiB
// point, then each transport. Counts are calibrated once per (transport,
// size), then fixed for all repetitions.
void stream_size(StreamDriver& drv, const StreamSettings& s, StreamResults& res, uint64_t* counts, uint64_t size,
                 int rep) {
  std::string line;
  if (size == kMemcpyBlock) {
    bench::arm_watchdog(120);
    res.memcpy_bps.push_back(memcpy_bandwidth(kMemcpyBlock, s.memcpy_seconds));
    res.memcpy_large_bps.push_back(memcpy_bandwidth(kMemcpyLarge, s.memcpy_seconds));
    line += "  memcpy " + bench::mbs(res.memcpy_large_bps.back()) + " (cached 64K " +
            bench::mbs(res.memcpy_bps.back()) + ")";
  }
  for (int t = 0; t < 4; ++t) {
    bench::arm_watchdog(120);
    if (counts[t] == 0) counts[t] = calibrate(drv, s, kOps[t], size);
    BwPoint p = drv.stream(kOps[t], size, counts[t]);
    p.rep = rep;
    line += std::string("  ") + p.transport + " " + bench::mbs(p.bytes_per_s());
    if (kOps[t] == StreamOp::kPio || kOps[t] == StreamOp::kDma) {
      line += bench::fmt(" (%.2f wakes/msg)", static_cast<double>(p.wakes) / static_cast<double>(p.messages));
    }
    res.bw.push_back(p);
  }
  std::fprintf(stderr, "[bw] rep %d/%d %7s MB/s:%s\n", rep + 1, s.reps, bench::size_label(size).c_str(), line.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  StreamResults res;
  const Options o = parse(argc, argv);
  FabricPair<StreamShared, StreamDriver> pair({"bench_fabric_stream", kStreamTargets}, o.common, run_stream_peer, res);
  print_stream_header(o.common, o.s, res);
  // Message counts, calibrated once per (transport, size), then fixed.
  std::vector<uint64_t> counts(4 * kStreamSizes.size(), 0);
  for (int rep = 0; rep < o.s.reps; ++rep) {
    for (size_t si = 0; si < kStreamSizes.size(); ++si) {
      stream_size(pair.driver(), o.s, res, &counts[4 * si], kStreamSizes[si], rep);
    }
  }
  return pair.end({[&] { print_stream_tables(o.s, res); }, [&] { return write_stream_results(o.common, o.s, res); },
                   "fabric_bandwidth.csv, fabric_stream.json"});
}
