// The frames of a DatagramLink inside the datagram channel's frames: the
// link header, its three types (datagram_link.hpp describes the format), and
// the deadline of sends that must not wait. Not part of the public API.
#pragma once

#include <cstdint>

#include "clan_emul/datagram_link.hpp"

namespace clan::datagram_link_detail {

inline constexpr uint32_t kData = 0x4c44a7a1;
inline constexpr uint32_t kAck = 0x4c44ac4b;
inline constexpr uint32_t kProbe = 0x4c44960b;

struct LinkHeader {
  uint32_t type;
  uint32_t credit;  // kData: low 32 bits of the sender's own `done` (piggybacked ack); else 0
  uint64_t value;
};
static_assert(sizeof(LinkHeader) == DatagramLink::kLinkHeader);

}  // namespace clan::datagram_link_detail
