// Word access of the fabric benchmarks: the payload every stream message
// carries and checks, and the shared words the ping-pongs wait on.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace fabric_bench {

// Word j of message m is m*K + j. The sender writes it for every message;
// the receiver adds up every word; the sums must agree.
constexpr uint64_t kMix = 0x9E3779B97F4A7C15ull;

inline void fill_payload(uint64_t* dst, size_t bytes, uint64_t m) {
  const uint64_t base = m * kMix;
  const size_t n = bytes / 8;
  for (size_t j = 0; j < n; ++j) dst[j] = base + j;
}
inline uint64_t expected_sum(size_t bytes, uint64_t m) {
  const uint64_t n = bytes / 8;
  return n * (m * kMix) + n * (n - 1) / 2;
}
inline uint64_t sum_words(const std::byte* p, size_t bytes) {
  uint64_t s = 0;
  const size_t n = bytes / 8;
  for (size_t j = 0; j < n; ++j) {
    uint64_t w;
    std::memcpy(&w, p + 8 * j, 8);
    s += w;
  }
  return s;
}

// Keeps the compiler from dropping or merging memcpy/fill loops.
inline void clobber(void* p) { asm volatile("" : : "r"(p) : "memory"); }

// A word the peer writes into this process's memory (a PIO landing zone).
inline uint64_t load_word(const std::byte* p) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(const_cast<std::byte*>(p)))
      .load(std::memory_order_acquire);
}

}  // namespace fabric_bench
