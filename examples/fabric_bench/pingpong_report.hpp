// bench_fabric_pingpong's results: Markdown tables on stdout, the round-trip
// histograms (fabric_latency.csv, read by scripts/plot_fabric.py) and
// fabric_pingpong.json.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/machine.hpp"
#include "bench/options.hpp"
#include "bench/stats.hpp"
#include "fabric_bench/program.hpp"

namespace fabric_bench {

struct LatencyResult {
  std::vector<uint64_t> all;              // every measured round trip
  std::vector<bench::Summary> per_round;  // one per alternation
  uint64_t wakes = 0;                     // wake-up syscalls, both sides
  // Appends one alternation's block.
  void add_round(const std::vector<uint64_t>& block);
};

struct PingResults : RunInfo {
  double clock_ns = 0;
  int alternations = 0;
  uint64_t block = 0, warm = 0;
  LatencyResult pio, bare, unix_;
};

// The target ids the tables report (targets.tsv).
extern const std::vector<std::string> kPingTargets;

void print_ping_header(const bench::CommonOptions& o, const PingResults& r);
void print_ping_tables(const PingResults& r);
// Writes the result files to o.out; false (reported) if it cannot.
bool write_ping_results(const bench::CommonOptions& o, const PingResults& r);

}  // namespace fabric_bench
