// A statistic with a single writer, read by anyone: the writer adds with a
// load and a store, no locked read-modify-write on its path.
#pragma once

#include <atomic>
#include <cstdint>

namespace clan {

inline void bump(std::atomic<uint64_t>& counter, uint64_t n = 1) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

}  // namespace clan
