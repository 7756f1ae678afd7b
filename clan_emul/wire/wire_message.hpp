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
  kWriteNotice = 3,    // a write landed (a message of its own size)
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

// A write notice: magic, op, three zero bytes, region, length, offset.
inline constexpr size_t kNoticeMessageBytes = 24;
std::array<std::byte, kNoticeMessageBytes> encode_notice_message(const WriteNotice& n);
// kCorrupt for a wrong length, magic or op, or non-zero padding.
Result<WriteNotice> decode_notice_message(const std::byte* data, size_t len);

}  // namespace clan::wire
