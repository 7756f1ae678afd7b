#include "omnitransport/header.hpp"

namespace otp {

void encode(const Header& h, std::byte* out) {
  out[0] = std::byte{static_cast<uint8_t>(h.type)};
  out[1] = std::byte{static_cast<uint8_t>(h.exactly_once ? 1 : 0)};
  out[2] = std::byte{static_cast<uint8_t>(h.size >> 8)};  // network byte order
  out[3] = std::byte{static_cast<uint8_t>(h.size & 0xFF)};
  out[4] = std::byte{h.call_seq};
  out[5] = std::byte{h.pkt_seq};
  out[6] = std::byte{static_cast<uint8_t>(h.fragmented ? 1 : 0)};
  out[7] = std::byte{0};
}

Errc decode(const std::byte* data, size_t len, Header& out) {
  if (data == nullptr || len < kHeaderSize) return Errc::kTruncated;
  const auto b = [data](size_t i) { return std::to_integer<uint8_t>(data[i]); };
  const uint16_t size = static_cast<uint16_t>((b(2) << 8) | b(3));
  if (size != len) return Errc::kSizeMismatch;
  const uint8_t type = b(0);
  if (type < static_cast<uint8_t>(PacketType::kPartial) || type > static_cast<uint8_t>(PacketType::kReclaimAck))
    return Errc::kUnknownType;
  if (b(1) > 1 || b(6) > 1) return Errc::kBadBool;
  if (b(7) != 0) return Errc::kBadPadding;
  out.type = static_cast<PacketType>(type);
  out.exactly_once = b(1) == 1;
  out.size = size;
  out.call_seq = b(4);
  out.pkt_seq = b(5);
  out.fragmented = b(6) == 1;
  return Errc::kOk;
}

}  // namespace otp
