// bench_clan_wire's shared layout: both sides export one region of the
// same shape, and every exchange is "payload, then a bell word" written
// into the other side's region over the wire. The bell's word says what
// the writer asks for; its tripwire wakes the other side.
#pragma once

#include <cstddef>
#include <cstdint>

#include "clan_emul/cookie.hpp"

namespace clan_wire_bench {

constexpr size_t kBellAt = 0;      // the bell (a tripwire): op | size | sequence
constexpr size_t kCounterAt = 64;  // stream: chunks produced (at the server), consumed (at the client)
constexpr size_t kHelloAt = 128;   // the client's Hello, before its first bell
constexpr size_t kMessageAt = 4096;
constexpr size_t kMaxMessage = 8192;
constexpr size_t kRingAt = kMessageAt + kMaxMessage;
constexpr size_t kRingSlots = 16;
constexpr size_t kMaxChunk = 64 * 1024;
constexpr size_t kRegionBytes = kRingAt + kRingSlots * kMaxChunk;

enum class Op : uint8_t {
  kHello = 1,   // the client's Hello is at kHelloAt: link back and ring its bell
  kPing = 2,    // echo `size` bytes at kMessageAt (none: the bell alone), then the same bell
  kMode = 3,    // wait in mode `size` (WaitMode) from now on; ring back
  kStream = 4,  // consume `size` chunks counted at kCounterAt, crediting each
  kQuit = 5,    // ring back and end
};

// A bell's word: op in the top 8 bits, a size or count in the next 24, a
// sequence number in the low 32 (so that every bell differs from the last).
constexpr uint64_t bell(Op op, uint32_t size, uint32_t seq) {
  return (uint64_t{static_cast<uint8_t>(op)} << 56) | (uint64_t{size & 0xffffff} << 32) | seq;
}
constexpr Op bell_op(uint64_t b) { return static_cast<Op>(b >> 56); }
constexpr uint32_t bell_size(uint64_t b) { return static_cast<uint32_t>(b >> 32) & 0xffffff; }

// How the server reaches the client: written into the server's region.
struct Hello {
  uint64_t nic_id;
  char address[64];  // the client's wire address, NUL-terminated
  clan::RdmaCookie cookie;
};
static_assert(kHelloAt + sizeof(Hello) <= kMessageAt);

}  // namespace clan_wire_bench
