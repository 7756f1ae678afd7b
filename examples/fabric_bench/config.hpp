// The fabric benchmarks' geometry and NIC settings, the same in both
// processes of bench_fabric_pingpong and bench_fabric_stream.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "clan_emul/dmq_layout.hpp"
#include "clan_emul/nic.hpp"

namespace fabric_bench {

constexpr uint64_t kMiB = 1024 * 1024;
constexpr size_t kRingBytes = 256 * 1024;
constexpr size_t kMaxMessage = 64 * 1024;

// A NIC named `name`, with the spin budget of --spin-ns when given (>= 0).
inline clan::NicConfig nic_config(const char* name, int64_t spin_ns) {
  clan::NicConfig c;
  c.name = name;
  if (spin_ns >= 0) c.spin_budget = std::chrono::nanoseconds(spin_ns);
  return c;
}

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
