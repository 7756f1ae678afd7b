#include "via_bench/results.hpp"

#include <algorithm>

namespace via_bench {

double LatSeries::sleeps_per_rt() const {
  return exchanges ? static_cast<double>(sleeps) / static_cast<double>(exchanges) : 0;
}

LatSeries& Results::series(const std::string& name, uint64_t size) {
  for (auto& s : lat) {
    if (s.name == name && s.size == size) return s;
  }
  lat.push_back(LatSeries{name, size, {}, {}});
  return lat.back();
}

const LatSeries* Results::find_series(const std::string& name, uint64_t size) const {
  for (const auto& s : lat) {
    if (s.name == name && s.size == size) return &s;
  }
  return nullptr;
}

bench::Summary Results::half(const std::string& name, uint64_t size) const {
  const LatSeries* s = find_series(name, size);
  return bench::scaled(s ? bench::summarize(s->rt) : bench::Summary{}, 2);
}

std::pair<double, double> Results::round_ratio_range(const std::string& num, const std::string& den,
                                                     uint64_t size) const {
  const LatSeries *a = find_series(num, size), *b = find_series(den, size);
  if (!a || !b) return {0, 0};
  std::vector<double> v;
  for (size_t i = 0; i < std::min(a->round_p50.size(), b->round_p50.size()); ++i) {
    if (b->round_p50[i] > 0) v.push_back(a->round_p50[i] / b->round_p50[i]);
  }
  return {bench::min_of(v), bench::max_of(v)};
}

std::vector<double> Results::bw_all(const std::string& name, uint64_t size) const {
  std::vector<double> v;
  for (const auto& p : bw) {
    if (p.name == name && p.size == size) v.push_back(p.mbs());
  }
  return v;
}

double Results::bw_sleeps(const std::string& name, uint64_t size) const {
  std::vector<double> v;
  for (const auto& p : bw) {
    if (p.name == name && p.size == size) v.push_back(p.act.sleeps_per_exchange());
  }
  return bench::median(v);
}

std::vector<double> Results::cq_all(const std::string& name, int conns) const {
  std::vector<double> v;
  for (const auto& p : cq) {
    if (p.name == name && p.conns == conns) v.push_back(p.rate());
  }
  return v;
}

}  // namespace via_bench
