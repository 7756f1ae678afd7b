#include "clan_emul/datagram_layout.hpp"

#include <cstring>

#include "clan_emul/crc32.hpp"

namespace clan::dgram {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "frame fields are stored little endian");

bool valid(const DatagramConfig& c) {
  return c.mtu > 0 && c.mtu <= 0xffffffffu - kFrameHeader && dmq::valid(dmq_config(c)) &&
         clan::valid(c.faults) && c.delay_line_bytes >= kFrameHeader + c.mtu;
}

void encode_frame(std::byte* frame, uint64_t sequence, const void* payload, size_t len) {
  const auto length = static_cast<uint32_t>(len);
  std::memcpy(frame + kSequence, &sequence, 8);
  std::memcpy(frame + kLength, &length, 4);
  if (len) std::memcpy(frame + kFrameHeader, payload, len);
  const uint32_t crc = crc32_update(crc32_update(0, frame, kCrc), frame + kFrameHeader, len);
  std::memcpy(frame + kCrc, &crc, 4);
}

FrameCheck check_frame(const std::byte* frame, size_t size, size_t mtu, uint64_t* sequence) {
  if (size < kFrameHeader || size - kFrameHeader > mtu) return FrameCheck::kMalformed;
  std::byte header[kFrameHeader];
  std::memcpy(header, frame, kFrameHeader);
  uint32_t length, crc;
  std::memcpy(&length, header + kLength, 4);
  std::memcpy(&crc, header + kCrc, 4);
  const size_t payload = size - kFrameHeader;
  if (crc32_update(crc32_update(0, header, kCrc), frame + kFrameHeader, payload) != crc) {
    return FrameCheck::kCorrupt;
  }
  if (length != payload) return FrameCheck::kMalformed;
  if (sequence) std::memcpy(sequence, header + kSequence, 8);
  return FrameCheck::kOk;
}

}  // namespace clan::dgram
