// The fabric benchmarks' DMQ geometry, the same in both processes of
// bench_fabric_pingpong and bench_fabric_stream.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "clan_emul/dmq_layout.hpp"

namespace fabric_bench {

constexpr uint64_t kMiB = 1024 * 1024;
constexpr size_t kRingBytes = 256 * 1024;
constexpr size_t kMaxMessage = 64 * 1024;

inline clan::DmqConfig dmq_config() {
  clan::DmqConfig c;
  c.ring_bytes = kRingBytes;
  c.max_message = kMaxMessage;
  return c;
}

// One word of a cache line of its own, in memory shared across the fork.
struct alignas(64) Line {
  std::atomic<uint64_t> v{0};
  char pad[56];
};

}  // namespace fabric_bench
