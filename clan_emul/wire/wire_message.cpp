#include "clan_emul/wire/wire_message.hpp"

#include <cstring>

namespace clan::wire {
namespace {

// Offsets: magic 0, op 4, status 5, zero 6..8, request 8, zero 16..32, cookie 32..80.
constexpr size_t kOpAt = 4, kStatusAt = 5, kRequestAt = 8, kCookieAt = 32;
constexpr uint8_t kLastErrc = static_cast<uint8_t>(Errc::kNotPermitted);

}  // namespace

static_assert(kWireMessageBytes == kCookieAt + sizeof(RdmaCookie));

std::array<std::byte, kWireMessageBytes> encode_wire_message(const WireMessage& m) {
  std::array<std::byte, kWireMessageBytes> out{};
  std::memcpy(out.data(), &kWireMagic, 4);
  out[kOpAt] = static_cast<std::byte>(m.op);
  out[kStatusAt] = static_cast<std::byte>(m.status);
  std::memcpy(out.data() + kRequestAt, &m.request, 8);
  if (m.op == WireOp::kImportRequest) std::memcpy(out.data() + kCookieAt, &m.cookie, sizeof m.cookie);
  return out;
}

Result<WireMessage> decode_wire_message(const std::byte* data, size_t len) {
  if (len != kWireMessageBytes) return Errc::kCorrupt;
  uint32_t magic;
  std::memcpy(&magic, data, 4);
  if (magic != kWireMagic) return Errc::kCorrupt;
  WireMessage m;
  const auto op = static_cast<uint8_t>(data[kOpAt]);
  const auto status = static_cast<uint8_t>(data[kStatusAt]);
  if (op != static_cast<uint8_t>(WireOp::kImportRequest) && op != static_cast<uint8_t>(WireOp::kImportReply)) {
    return Errc::kCorrupt;
  }
  if (status > kLastErrc) return Errc::kCorrupt;
  for (size_t i : {size_t{6}, size_t{7}}) {
    if (data[i] != std::byte{0}) return Errc::kCorrupt;
  }
  for (size_t i = 16; i < kCookieAt; ++i) {
    if (data[i] != std::byte{0}) return Errc::kCorrupt;
  }
  m.op = static_cast<WireOp>(op);
  m.status = static_cast<Errc>(status);
  std::memcpy(&m.request, data + kRequestAt, 8);
  std::memcpy(&m.cookie, data + kCookieAt, sizeof m.cookie);
  return m;
}

std::array<std::byte, kNoticeMessageBytes> encode_notice_message(const WriteNotice& n) {
  std::array<std::byte, kNoticeMessageBytes> out{};
  std::memcpy(out.data(), &kWireMagic, 4);
  out[kOpAt] = static_cast<std::byte>(WireOp::kWriteNotice);
  std::memcpy(out.data() + 8, &n.region, 4);
  std::memcpy(out.data() + 12, &n.length, 4);
  std::memcpy(out.data() + 16, &n.offset, 8);
  return out;
}

Result<WriteNotice> decode_notice_message(const std::byte* data, size_t len) {
  if (len != kNoticeMessageBytes) return Errc::kCorrupt;
  uint32_t magic;
  std::memcpy(&magic, data, 4);
  if (magic != kWireMagic || data[kOpAt] != static_cast<std::byte>(WireOp::kWriteNotice)) return Errc::kCorrupt;
  for (size_t i = 5; i < 8; ++i) {
    if (data[i] != std::byte{0}) return Errc::kCorrupt;
  }
  WriteNotice n;
  std::memcpy(&n.region, data + 8, 4);
  std::memcpy(&n.length, data + 12, 4);
  std::memcpy(&n.offset, data + 16, 8);
  return n;
}

}  // namespace clan::wire
