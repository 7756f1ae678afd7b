// The 8-byte omniTransport header (paper 002, Table 2) and the on-wire
// message types (Table 1), plus 8-bit sequence-space arithmetic.
//
//   byte 0  CARD8   message type      (PacketType, 1..6; 0 and >6 rejected)
//   byte 1  BOOL    exactly-once      (0 or 1)
//   byte 2  CARD16  message size      whole packet incl. header, NETWORK byte order (big-endian)
//   byte 4  CARD8   call sequence
//   byte 5  CARD8   packet sequence   (per call, from 0, wraps mod 256)
//   byte 6  BOOL    fragmented        (0 or 1: packet is one fragment of a strand chunk)
//   byte 7  CARD8   padding           (must be 0)
//
// The paper gives no numeric type codes; these are ours.
#pragma once

#include <cstddef>
#include <cstdint>

#include "omnitransport/error.hpp"

namespace otp {

inline constexpr size_t kHeaderSize = 8;
inline constexpr size_t kMaxPacketSize = 0xFFFF;  // CARD16 size field

enum class PacketType : uint8_t {
  kPartial = 1,     // part of a request/reply, more follows
  kComplete = 2,    // last packet of a request/reply
  kCallAck = 3,     // acknowledge buffers of a call
  kNack = 4,        // retransmit buffers of call_seq from pkt_seq on
  kReclaim = 5,     // acknowledge all received buffers now, please
  kReclaimAck = 6,  // buffers of call_seq below pkt_seq were received
};

constexpr const char* to_string(PacketType t) {
  switch (t) {
    case PacketType::kPartial: return "PARTIAL";
    case PacketType::kComplete: return "COMPLETE";
    case PacketType::kCallAck: return "CALL_ACK";
    case PacketType::kNack: return "NACK";
    case PacketType::kReclaim: return "RECLAIM";
    case PacketType::kReclaimAck: return "RECLAIM_ACK";
  }
  return "?";
}

constexpr bool is_data(PacketType t) { return t == PacketType::kPartial || t == PacketType::kComplete; }

struct Header {
  PacketType type = PacketType::kPartial;
  bool exactly_once = false;
  uint16_t size = kHeaderSize;  // whole packet, header included
  uint8_t call_seq = 0;
  uint8_t pkt_seq = 0;
  bool fragmented = false;

  bool operator==(const Header&) const = default;
};

// Writes exactly kHeaderSize bytes at out (padding written as 0).
void encode(const Header& h, std::byte* out);

// Validates and decodes a whole datagram of len bytes. Never reads past len.
Errc decode(const std::byte* data, size_t len, Header& out);

// Sequence space on 8 bits: a - b as a signed distance in [-128, 127].
constexpr int seq_diff(uint8_t a, uint8_t b) { return static_cast<int8_t>(static_cast<uint8_t>(a - b)); }
// a comes before b (modulo 256, within half the space).
constexpr bool seq_lt(uint8_t a, uint8_t b) { return seq_diff(a, b) < 0; }
constexpr bool seq_le(uint8_t a, uint8_t b) { return seq_diff(a, b) <= 0; }

}  // namespace otp
