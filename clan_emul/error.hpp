// Error codes of the emulated CLAN NIC. The fabric never throws: every
// operation returns an Errc (or a Result<T> carrying one), as omniORB's
// transports do; the ORB layer turns them into CORBA exceptions. A failure
// a user can meet also leaves its cause in words (clan_emul/error_detail.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

namespace clan {

enum class Errc : uint8_t {
  kOk = 0,
  kInvalidArgument,   // caller error: bad size, offset, state
  kOutOfRange,        // offset/length outside an aperture or region
  kForgedCookie,      // cookie names no region this NIC exported
  kStaleCookie,       // cookie names a region that was freed (slot reused)
  kRevokedCookie,     // cookie was revoked by its exporter
  kNoResources,       // a finite NIC resource ran out (CAM, imports, regions, queues)
  kTimeout,           // deadline passed
  kWouldBlock,        // non-blocking call could not complete now
  kPeerDead,          // the peer process died (detected by the connection manager)
  kClosed,            // the connection or object was closed in an orderly way
  kCorrupt,           // shared memory written by a peer failed validation
  kRefused,           // connection refused (no listener, or rejected)
  kAddressInUse,      // node name or port already taken
  kSystem,            // a system call failed (error_detail.hpp holds its errno)
  kNotPermitted,      // refused for safety: e.g. the runtime directory belongs to another user
};

// Switch without default: the compiler reports a missing case.
constexpr const char* to_string(Errc e) {
  switch (e) {
    case Errc::kOk: return "ok";
    case Errc::kInvalidArgument: return "invalid argument";
    case Errc::kOutOfRange: return "offset or length out of range";
    case Errc::kForgedCookie: return "forged RDMA cookie";
    case Errc::kStaleCookie: return "stale RDMA cookie";
    case Errc::kRevokedCookie: return "revoked RDMA cookie";
    case Errc::kNoResources: return "NIC resource exhausted";
    case Errc::kTimeout: return "timed out";
    case Errc::kWouldBlock: return "would block";
    case Errc::kPeerDead: return "peer died";
    case Errc::kClosed: return "closed";
    case Errc::kCorrupt: return "corrupt data from peer";
    case Errc::kRefused: return "connection refused";
    case Errc::kAddressInUse: return "address in use";
    case Errc::kSystem: return "system call failed";
    case Errc::kNotPermitted: return "not permitted";
  }
  return "unknown error";
}

// A value or an error. Small on purpose: the fabric needs nothing more.
template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}                 // NOLINT: implicit by design
  Result(Errc err) : err_(err) {}                               // NOLINT: implicit by design
  bool ok() const { return err_ == Errc::kOk; }
  explicit operator bool() const { return ok(); }
  Errc error() const { return err_; }
  T& value() & { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  T& operator*() { return *value_; }

 private:
  std::optional<T> value_;
  Errc err_ = Errc::kOk;
};

}  // namespace clan
