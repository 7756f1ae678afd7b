// Error codes of omniTransport. Nothing here throws: every operation returns
// an Errc; the ORB layer (orb_transports/otp) turns them into CORBA exceptions.
#pragma once

#include <cstdint>

namespace otp {

enum class Errc : uint8_t {
  kOk = 0,
  // Header decoding (header.cpp).
  kTruncated,        // datagram shorter than the 8-byte header
  kSizeMismatch,     // header size field != datagram length
  kUnknownType,      // message type is not one of Table 1's on-wire types
  kBadBool,          // a BOOL field is neither 0 nor 1
  kBadPadding,       // padding byte is not 0
  // Engine.
  kTooLarge,         // packet would exceed the CARD16 size field
  kWrongState,       // operation not allowed in the current state (e.g. send while waiting for reply)
  kZombie,           // the connection is dead (hard error); no further operations
};

// Switch without default: the compiler reports a missing case.
constexpr const char* to_string(Errc e) {
  switch (e) {
    case Errc::kOk: return "ok";
    case Errc::kTruncated: return "datagram shorter than the omniTransport header";
    case Errc::kSizeMismatch: return "header size field does not match the datagram length";
    case Errc::kUnknownType: return "unknown message type";
    case Errc::kBadBool: return "BOOL field neither 0 nor 1";
    case Errc::kBadPadding: return "nonzero padding byte";
    case Errc::kTooLarge: return "packet too large for the size field";
    case Errc::kWrongState: return "operation not allowed in this state";
    case Errc::kZombie: return "connection is a zombie";
  }
  return "?";
}

}  // namespace otp
