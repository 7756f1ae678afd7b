// The wire's control messages: what an importing NIC asks an exporting NIC
// of another host, and its answer. They travel as sends on the same
// ordered endpoint as the writes, fixed-size and little-endian;
// decode_wire_message checks every field and the exact length, since they
// come from another host.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "clan_emul/cookie.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/wire/write_notice.hpp"

namespace clan::wire {

enum class WireOp : uint8_t {
  kImportRequest = 1,  // check this cookie and open its registration
  kImportReply = 2,    // the check's outcome (status)
  kWriteNotice = 3,    // a write landed in the shadow (a message of its own size)
  kWriteInline = 4,    // a small write, its bytes in the message itself
  kRevoked = 5,        // the exporter revoked (or freed) cookie.region at cookie.generation
};

struct WireMessage {
  WireOp op = WireOp::kImportRequest;
  Errc status = Errc::kOk;  // replies only
  uint64_t request = 0;     // matches a reply to its request
  RdmaCookie cookie{};      // requests only
};

inline constexpr size_t kWireMessageBytes = 32 + sizeof(RdmaCookie);  // 80
inline constexpr uint32_t kWireMagic = 0x3157'4c43;  // "CLW1"

std::array<std::byte, kWireMessageBytes> encode_wire_message(const WireMessage& m);
// kCorrupt for a wrong length, magic, op or status, or non-zero padding.
Result<WireMessage> decode_wire_message(const std::byte* data, size_t len);

// A write notice: magic, op, three zero bytes, region, length, offset;
// an inline write has its `length` bytes after that.
inline constexpr size_t kNoticeMessageBytes = 24;
// Writes up to this size travel inside their notice: each delivers exactly
// its own bytes (a pointer written twice in one burst lands as 1, then 2),
// where a notice of a write in the shadow delivers whatever the shadow
// holds by then. The notice and its bytes fit a receive slot.
inline constexpr size_t kMaxInlineWrite = 96;
std::array<std::byte, kNoticeMessageBytes> encode_notice_message(const WriteNotice& n);
// The notice and `len` bytes of data in `out` (at least kNoticeMessageBytes
// + len), its size returned.
size_t encode_inline_write(const WriteNotice& n, const void* data, std::byte* out);
// The op of a message from the wire, or 0 if it has no wire magic.
uint8_t wire_op(const std::byte* data, size_t len);
struct DecodedNotice {
  WriteNotice notice;
  const std::byte* inline_data = nullptr;  // an inline write's bytes, else null
};
// kCorrupt for a wrong length, magic or op, non-zero padding, or an inline
// write whose length is not the message's rest or above kMaxInlineWrite.
Result<DecodedNotice> decode_notice_message(const std::byte* data, size_t len);

}  // namespace clan::wire
