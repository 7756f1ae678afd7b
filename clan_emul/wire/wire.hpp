// The remote wire of a NIC: libfabric RMA between NICs of different hosts
// (clan_emul/wire/DESIGN.md). An aperture onto a region of a NIC of another
// host carries its PIO writes and DMA requests over a FI_EP_MSG endpoint:
// RMA writes, each followed by a notice (a message) saying which region,
// where and how much, or small writes inside their notice, so that the
// target's NIC logic delivers the write and fires the tripwires it
// touched, as a local writer does.
//
// At the target, a cookie presented over the wire is checked against the
// NIC's region table (as a local import checks it) before its region is
// registered with a key derived from the cookie: the provider then checks
// that key on every write, and a wrong key, a closed registration or an
// out-of-range offset ends that writer's connection, nothing written.
// Revocation and freeing close the registration. Writes land in a shadow
// of the region that only the wire writes; the target's NIC logic copies
// each write from there into the region once its notice arrives, so an
// aligned word lands as one store, as a local write_word does.
//
// Progress: libfabric delivers writes only while someone reads the
// completion queue. A thread of the wire's own runs a Boost.Asio
// io_context that watches the queue's and the event queue's wait
// descriptors and a timer; a thread that spins waiting for the fabric
// (spin_wait.hpp) reads the queue itself, so a spinning receiver sees a
// write without a wake-up.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "clan_emul/cookie.hpp"
#include "clan_emul/deadline.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/wire/wire_config.hpp"
#include "clan_emul/wire/wire_link.hpp"

namespace clan::wire {

// What the wire asks of the NIC it belongs to, for writes and cookies that
// come from other hosts.
class WireOwner {
 public:
  struct Admitted {
    std::byte* base = nullptr;
    size_t length = 0;
  };
  // Checks a cookie against this NIC's region table, as a local import does.
  virtual Result<Admitted> admit_remote_import(const RdmaCookie& cookie) = 0;
  // A remote write landed in [offset, offset+length) of `region`.
  virtual void remote_write_landed(uint32_t region, size_t offset, size_t length) = 0;

 protected:
  ~WireOwner() = default;
};

struct WireStats {
  uint64_t links_accepted = 0;    // connections other NICs made to this one
  uint64_t links_refused = 0;     // connections refused: the NIC had its most links
  uint64_t links_broken = 0;      // connections that went down (peer gone, bad key, shutdown)
  uint64_t notices_dropped = 0;   // notices for a region their link did not import, or out of range
  uint64_t messages_dropped = 0;  // control messages that failed decoding
  uint64_t registrations = 0;     // regions registered for remote writes now
};

class WireEngine;

class Wire {
 public:
  static Result<std::unique_ptr<Wire>> open(const WireConfig& config, WireOwner& owner);
  ~Wire();
  Wire(const Wire&) = delete;
  Wire& operator=(const Wire&) = delete;

  // Where peers reach this NIC: "host:port".
  const std::string& address() const;
  const std::string& provider() const;

  // The link to the NIC `nic_id` listening at `address` (empty: where it
  // was reached before): made on first use (kRefused, kTimeout, with
  // words), shared after, made anew once down.
  Result<std::shared_ptr<WireLink>> link_to(uint64_t nic_id, const std::string& address, Deadline deadline);
  // Whether a link to `nic_id` was ever asked for: its cookies are remote.
  bool knows(uint64_t nic_id) const;
  // Asks the exporting NIC to check `cookie` and register its region for
  // writes: kOk, or the cookie's error (kForgedCookie, kStaleCookie,
  // kRevokedCookie), kClosed if the link goes down, kTimeout.
  Errc validate_import(WireLink& link, const RdmaCookie& cookie, Deadline deadline);
  // A round trip behind every message sent so far on `link`: kOk once the
  // exporting NIC has delivered every earlier write (whatever it now says
  // of `cookie`); kClosed if the link goes down, kTimeout.
  Errc fence(WireLink& link, const RdmaCookie& cookie, Deadline deadline);
  // Closes `region`'s registration, if any: every key issued for it stops
  // working (revocation, freeing). Waits for a delivery in progress.
  void close_registration(uint32_t region);
  // One round of progress, unless another thread is making it.
  void poll();
  WireStats stats() const;

 private:
  friend class WireLink;
  explicit Wire(std::unique_ptr<WireEngine> engine);
  std::unique_ptr<WireEngine> engine_;
};

// The progress hook a spinning waiter calls (spin_wait.hpp): polls every
// open wire of the process. Registered while any wire is open.
void poll_open_wires();
// The hook a waiter calls before it sleeps: the wires' threads, standing
// down while waiters spun, watch their queues again.
void kick_open_wires();

}  // namespace clan::wire
