#include "clan_emul/datagram_layout.hpp"

#include <cstring>

#include "clan_emul/crc32.hpp"

namespace clan::dgram {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "frame fields are stored little endian");

bool valid(const DatagramConfig& c) {
  return c.mtu > 0 && c.mtu <= 0xffffffffu - kFrameHeader && dmq::valid(dmq_config(c)) &&
         clan::valid(c.faults) && c.delay_line_bytes >= kFrameHeader + c.mtu;
}

uint32_t frame_crc(const std::byte* header, const std::byte* payload, size_t len) {
  return crc32c_update(crc32c_update(0, header, kCrc), payload, len);
}

void encode_frame(std::byte* frame, uint64_t sequence, const void* payload, size_t len) {
  encode_frame(frame, sequence, nullptr, 0, payload, len);
}

void encode_frame(std::byte* frame, uint64_t sequence, const void* head, size_t head_len,
                  const void* payload, size_t len) {
  const auto length = static_cast<uint32_t>(head_len + len);
  std::memcpy(frame + kSequence, &sequence, 8);
  std::memcpy(frame + kLength, &length, 4);
  if (head_len) std::memcpy(frame + kFrameHeader, head, head_len);
  if (len) std::memcpy(frame + kFrameHeader + head_len, payload, len);
  const uint32_t crc = frame_crc(frame, frame + kFrameHeader, length);
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
  if (frame_crc(header, frame + kFrameHeader, payload) != crc) {
    return FrameCheck::kCorrupt;
  }
  if (length != payload) return FrameCheck::kMalformed;
  if (sequence) std::memcpy(sequence, header + kSequence, 8);
  return FrameCheck::kOk;
}

}  // namespace clan::dgram
