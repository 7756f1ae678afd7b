// The distributed message queue (paper 000, Fig. 1): a ring in the receiver's
// memory that the sender writes through an aperture, plus one word in the
// sender's memory that the receiver writes back.
//
// Receiver region:  [0] lazy_write_i  [8] closed-by-sender  (tripwire on [0])
//                   [64 .. 64+ring)   the ring
//                   [64+ring .. +reserve)  reserved area after the ring
// Sender region:    [0] lazy_read_i   [8] closed-by-receiver (tripwire on [0])
//
// Positions are free-running 64-bit byte counts; the ring offset is
// position & (ring - 1). A message is an 8-byte header (length, check word)
// and its payload padded to 8 bytes, always contiguous in memory: a message
// that would wrap runs on into the reserved area after the ring instead, so
// the receiver reads every message in place. (Only the area after the ring is
// needed for that; nothing is copied before the ring.)
#pragma once

#include <cstddef>
#include <cstdint>

namespace clan {

struct DmqConfig {
  size_t ring_bytes = 256 * 1024;   // power of two, at least 4 KiB
  size_t max_message = 64 * 1024;   // largest payload; sizes the reserved area
};

enum class Transfer : uint8_t { kPio, kDma };

namespace dmq {

constexpr size_t kLazyWrite = 0;
constexpr size_t kSenderClosed = 8;
constexpr size_t kRing = 64;
constexpr size_t kLazyRead = 0;
constexpr size_t kReceiverClosed = 8;
constexpr size_t kSenderRegionBytes = 64;
constexpr size_t kHeader = 8;
constexpr uint32_t kCheckKey = 0x5eed1e55;

constexpr size_t align8(size_t n) { return (n + 7) & ~size_t{7}; }
constexpr size_t reserve_bytes(const DmqConfig& c) { return kHeader + align8(c.max_message); }
constexpr size_t receiver_region_bytes(const DmqConfig& c) {
  return kRing + c.ring_bytes + reserve_bytes(c);
}
constexpr bool valid(const DmqConfig& c) {
  return c.ring_bytes >= 4096 && (c.ring_bytes & (c.ring_bytes - 1)) == 0 && c.max_message > 0 &&
         kHeader + align8(c.max_message) <= c.ring_bytes / 2 && c.max_message <= 0xffffffffu;
}
// The header: payload length, and a check word tied to the message's position
// that exposes misframing or a peer writing garbage.
constexpr uint64_t header(uint64_t position, uint32_t len) {
  return uint64_t{len} | uint64_t{static_cast<uint32_t>(position >> 3) ^ kCheckKey} << 32;
}

}  // namespace dmq
}  // namespace clan
