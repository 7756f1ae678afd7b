// bench_fabric_stream's results: Markdown tables on stdout, the points
// (fabric_bandwidth.csv, read by scripts/plot_fabric.py) and
// fabric_stream.json.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/machine.hpp"
#include "bench/options.hpp"
#include "fabric_bench/program.hpp"
#include "fabric_bench/stream.hpp"

namespace fabric_bench {

// The message sizes of the streams.
extern const std::vector<uint64_t> kStreamSizes;

struct StreamSettings {
  uint64_t bw_bytes = 64 * kMiB;  // per point and repetition, at most
  double bw_seconds = 1.0;        // per point and repetition, at most
  int reps = 3;                   // repetitions (alternating transports)
  double pilot_seconds = 0.02;    // calibration (and warm-up) of each point
  double memcpy_seconds = 0.3;
};

struct StreamResults : RunInfo {
  std::vector<BwPoint> bw;
  std::vector<double> memcpy_bps;        // 64 KiB, cache resident; one per repetition
  std::vector<double> memcpy_large_bps;  // kMemcpyLarge, out of cache; one per repetition
};

// The target ids the tables report (targets.tsv).
extern const std::vector<std::string> kStreamTargets;

void print_stream_header(const bench::CommonOptions& o, const StreamSettings& s, const StreamResults& r);
void print_stream_tables(const StreamSettings& s, const StreamResults& r);
// Writes the result files to o.out; false (reported) if it cannot.
bool write_stream_results(const bench::CommonOptions& o, const StreamSettings& s, const StreamResults& r);

}  // namespace fabric_bench
