#include "bench/stats.hpp"

#include <algorithm>
#include <cmath>

namespace bench {

double percentile_sorted(const std::vector<uint64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  if (rank == 0) rank = 1;
  if (rank > sorted.size()) rank = sorted.size();
  return static_cast<double>(sorted[rank - 1]);
}

Summary summarize(std::vector<uint64_t> samples) {
  Summary s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  long double sum = 0;
  for (uint64_t v : samples) sum += static_cast<long double>(v);
  s.min = static_cast<double>(samples.front());
  s.max = static_cast<double>(samples.back());
  s.mean = static_cast<double>(sum / static_cast<long double>(samples.size()));
  s.p50 = percentile_sorted(samples, 0.50);
  s.p90 = percentile_sorted(samples, 0.90);
  s.p99 = percentile_sorted(samples, 0.99);
  return s;
}

Summary scaled(Summary s, double d) {
  s.min /= d;
  s.p50 /= d;
  s.p90 /= d;
  s.p99 /= d;
  s.max /= d;
  s.mean /= d;
  return s;
}

double fraction_below(const std::vector<uint64_t>& samples, uint64_t limit_ns) {
  if (samples.empty()) return 0;
  size_t n = 0;
  for (uint64_t v : samples) n += v <= limit_ns;
  return static_cast<double>(n) / static_cast<double>(samples.size());
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double min_of(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }

double max_of(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

}  // namespace bench
