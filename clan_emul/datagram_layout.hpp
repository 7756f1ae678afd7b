// The unreliable datagram channel: the ATM AAL5-like link that
// omniTransport (paper 002) runs over. One direction per DatagramSender /
// DatagramReceiver pair, carried over a distributed message queue (DMQ),
// which keeps order, or over UDP (wire/udp_channel.hpp), which may reorder.
//
// Frame = one DMQ message, or one UDP datagram:
//   [0]  u64 sequence   assigned by the sender to every datagram it accepts
//                       (dropped ones included), for statistics only: the
//                       receiver never acts on it
//   [8]  u32 length     payload bytes; must equal the message (datagram)
//                       size - 16
//   [12] u32 crc        CRC-32C of bytes [0, 12) followed by the payload,
//                       in the place of the AAL5 trailer CRC (it covers the
//                       length field too); Castagnoli rather than AAL5's
//                       IEEE polynomial because CPUs compute it in hardware
//                       (crc32.hpp)
//   [16] payload        up to the MTU
// All fields little endian.
#pragma once

#include <cstddef>
#include <cstdint>

#include "clan_emul/dmq_layout.hpp"
#include "clan_emul/fault_model.hpp"

namespace clan {

struct DatagramConfig {
  size_t mtu = 9180;               // largest datagram (classical IP over ATM, RFC 1626)
  size_t ring_bytes = 256 * 1024;  // the DMQ ring (power of two); both ends must agree
  FaultModel faults{};             // sender only: the emulated link's faults and delay
  // Sender with a delay only: frame bytes the link may hold at once (its
  // bandwidth-delay product); send() blocks while it is full.
  size_t delay_line_bytes = 4 * 1024 * 1024;
};

namespace dgram {

constexpr size_t kSequence = 0;
constexpr size_t kLength = 8;
constexpr size_t kCrc = 12;
constexpr size_t kFrameHeader = 16;

constexpr DmqConfig dmq_config(const DatagramConfig& c) {
  return DmqConfig{c.ring_bytes, kFrameHeader + c.mtu};
}
bool valid(const DatagramConfig& c);

// Writes header + payload into `frame` (kFrameHeader + len bytes).
void encode_frame(std::byte* frame, uint64_t sequence, const void* payload, size_t len);
// The same with a payload gathered from two pieces: head, then payload.
void encode_frame(std::byte* frame, uint64_t sequence, const void* head, size_t head_len,
                  const void* payload, size_t len);
// The frame's CRC: over header bytes [0, kCrc) and the payload.
uint32_t frame_crc(const std::byte* header, const std::byte* payload, size_t len);

enum class FrameCheck : uint8_t { kOk, kCorrupt, kMalformed };

constexpr const char* to_string(FrameCheck c) {
  switch (c) {
    case FrameCheck::kOk: return "ok";
    case FrameCheck::kCorrupt: return "CRC mismatch";
    case FrameCheck::kMalformed: return "malformed";
  }
  return "unknown";
}

// Validates one received frame of `size` bytes: short or longer than
// header + mtu -> kMalformed; CRC mismatch -> kCorrupt; CRC good but the
// length field disagrees with the size -> kMalformed. Reads the header once.
FrameCheck check_frame(const std::byte* frame, size_t size, size_t mtu, uint64_t* sequence);

}  // namespace dgram
}  // namespace clan
