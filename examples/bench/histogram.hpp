// Log-linear histogram (HDR style): exact below 64 ns, then 64 bins per
// power of two (about 1.6 % relative resolution). Enough to draw a CDF of
// round trips without storing every sample.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace bench {

class LogHistogram {
 public:
  static constexpr unsigned kSubBits = 6;  // 64 sub-bins per octave

  void add(uint64_t v) { ++bins_[bin_lo(v)]; }
  void add_all(const std::vector<uint64_t>& v) {
    for (uint64_t x : v) add(x);
  }
  // Lower bound (inclusive) of the bin holding v.
  static uint64_t bin_lo(uint64_t v) {
    if (v < (uint64_t{1} << kSubBits)) return v;
    unsigned msb = 63 - static_cast<unsigned>(__builtin_clzll(v));
    unsigned shift = msb - kSubBits;
    return (v >> shift) << shift;
  }
  // Upper bound (exclusive) of the bin starting at lo.
  static uint64_t bin_hi(uint64_t lo) {
    if (lo < (uint64_t{1} << kSubBits)) return lo + 1;
    unsigned msb = 63 - static_cast<unsigned>(__builtin_clzll(lo));
    return lo + (uint64_t{1} << (msb - kSubBits));
  }
  const std::map<uint64_t, uint64_t>& bins() const { return bins_; }

 private:
  std::map<uint64_t, uint64_t> bins_;
};

}  // namespace bench
