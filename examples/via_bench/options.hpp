// The VIA benchmarks' options: the common ones (bench/options.hpp), sized
// down by --quick, and the CQ test's connection counts.
#pragma once

#include <cstdint>
#include <vector>

#include "bench/options.hpp"

namespace via_bench {

struct Options : bench::CommonOptions {
  uint64_t roundtrips = 20000;           // per latency point (64 KiB: a tenth)
  int rounds = 5;                        // alternations of the latency blocks
  uint64_t bw_bytes = 10 * 1000 * 1000;  // at least this much per point (paper: 10 MB) ...
  double bw_seconds = 0.05;              // ... or this long, per repetition, whichever is less
  int bw_reps = 3;                       // repetitions per point, streams alternated
  double cq_seconds = 0.3;               // per point and repetition
  int cq_reps = 3;
  std::vector<int> cq_conns = {1, 2, 4, 8, 16, 32, 64};
};

// Parses the command line; --cq-conns N,N,... only if `cq_conns` (the CQ
// program). Prints the usage and exits with 2 on an unknown option.
Options parse_options(int argc, char** argv, bool cq_conns);

}  // namespace via_bench
