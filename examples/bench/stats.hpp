// Statistics of the benchmarks' samples: latency summaries with exact
// percentiles from the raw samples, and medians and ranges of repetitions.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

namespace bench {

struct Summary {
  size_t count = 0;
  double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;  // nanoseconds
};

// Nearest-rank percentile of sorted samples (q in [0, 1]).
double percentile_sorted(const std::vector<uint64_t>& sorted, double q);

Summary summarize(std::vector<uint64_t> samples);

// Every figure of `s` divided by `d` (half round trips from round trips).
Summary scaled(Summary s, double d);

// Fraction of samples at or below `limit_ns`.
double fraction_below(const std::vector<uint64_t>& samples, uint64_t limit_ns);

double median(std::vector<double> v);
double min_of(const std::vector<double>& v);
double max_of(const std::vector<double>& v);

// Nanoseconds from a to b, as a sample.
inline uint64_t ns_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}

}  // namespace bench
