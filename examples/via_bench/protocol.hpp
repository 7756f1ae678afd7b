// The control protocol between the measuring process (A, the parent, client
// and sender) and its peer (B, the child, server and receiver).
#pragma once

#include <cstdint>

#include "bench/activity.hpp"
#include "clan_emul/cookie.hpp"

namespace via_bench {

enum class Op : uint32_t { kViaLat = 1, kDmqLat, kViaBw, kDmqBw, kCq, kQuit };

struct Command {
  Op op{};
  uint32_t mode = 0;  // VIP_CLAN_TRANSFER_*, or for DMQ: 0 PIO, 1 DMA
  uint64_t size = 0;
  uint64_t count = 0;  // round trips / messages / connections
};

struct Reply {
  int32_t status = 0;  // 0 ok, else a step number / VIP_RETURN
  uint32_t pad = 0;
  uint64_t count = 0;
  int64_t end_ns = 0;  // streams: steady_clock when the last message was consumed
  bench::Activity act;
};

// The raw DMQ's cookies, exchanged before the VIs connect.
struct Hello {
  clan::RdmaCookie tx;  // this side's DMQ sender (for the peer receiver's attach)
  clan::RdmaCookie rx;  // this side's DMQ receiver (for the peer sender's attach)
  int32_t status;
};

}  // namespace via_bench
