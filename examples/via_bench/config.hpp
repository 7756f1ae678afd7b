// The fixed shape of the VIA benchmarks (paper 001 sect. 4): message sizes,
// buffers, the completion-queue test's connections, and the raw DMQ they
// are compared with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "clan_emul/dmq_layout.hpp"
#include "via/vipl.h"

namespace via_bench {

constexpr size_t kMaxMessage = 64 * 1024;
constexpr size_t kRecvBuffers = 4;  // posted receive buffers (paper: four)
constexpr size_t kSendSlots = 16;   // send buffers/descriptors in flight (bandwidth)
// VIs on the server's CQ (paper 001 Fig. 7 goes to 64 connections), on a NIC
// of their own.
constexpr size_t kCqMax = 64;
constexpr uint32_t kCqMessage = 4;  // bytes per CQ request
constexpr uint32_t kStopMarker = 0xffffffffu;
constexpr VIP_ULONG kWaitMs = 10000;  // every VIPL wait is bounded

inline const std::vector<uint64_t> kLatSizes = {0, 4, 40, 128, 65536};
inline const std::vector<uint64_t> kBwSizes = {16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536};

// What a program sets up besides the raw DMQ: the main VI (latency,
// bandwidth) and the CQ's kCqMax VIs, each on a NIC of its own.
struct Parts {
  bool main = false;
  bool cq = false;
  size_t connections() const { return (main ? 1 : 0) + (cq ? kCqMax : 0); }
};

// Both processes' view of the set-up, fixed before the fork.
struct Setup {
  std::string node_a, node_b;  // OOB node names (= VIPL host names)
  bool pin = true;             // A on the first allowed CPU, B on the second
  Parts parts;
};

// The raw DMQ: a ring as large as the 4 x 64 KiB receive buffers.
clan::DmqConfig dmq_config();

}  // namespace via_bench
