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
  if (m.op != WireOp::kImportReply) std::memcpy(out.data() + kCookieAt, &m.cookie, sizeof m.cookie);
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
  if (op != static_cast<uint8_t>(WireOp::kImportRequest) && op != static_cast<uint8_t>(WireOp::kImportReply) &&
      op != static_cast<uint8_t>(WireOp::kRevoked)) {
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

size_t encode_inline_write(const WriteNotice& n, const void* data, std::byte* out) {
  const auto head = encode_notice_message(n);
  std::memcpy(out, head.data(), head.size());
  out[kOpAt] = static_cast<std::byte>(WireOp::kWriteInline);
  if (n.length != 0) std::memcpy(out + head.size(), data, n.length);
  return head.size() + n.length;
}

uint8_t wire_op(const std::byte* data, size_t len) {
  if (len < 8) return 0;
  uint32_t magic;
  std::memcpy(&magic, data, 4);
  return magic == kWireMagic ? static_cast<uint8_t>(data[kOpAt]) : 0;
}

Result<DecodedNotice> decode_notice_message(const std::byte* data, size_t len) {
  const uint8_t op = wire_op(data, len);
  const bool in_line = op == static_cast<uint8_t>(WireOp::kWriteInline);
  if (len < kNoticeMessageBytes || (!in_line && op != static_cast<uint8_t>(WireOp::kWriteNotice))) {
    return Errc::kCorrupt;
  }
  for (size_t i = 5; i < 8; ++i) {
    if (data[i] != std::byte{0}) return Errc::kCorrupt;
  }
  DecodedNotice d;
  std::memcpy(&d.notice.region, data + 8, 4);
  std::memcpy(&d.notice.length, data + 12, 4);
  std::memcpy(&d.notice.offset, data + 16, 8);
  const size_t expected = kNoticeMessageBytes + (in_line ? d.notice.length : 0);
  if (len != expected || (in_line && d.notice.length > kMaxInlineWrite)) return Errc::kCorrupt;
  if (in_line) d.inline_data = data + kNoticeMessageBytes;
  return d;
}

}  // namespace clan::wire
