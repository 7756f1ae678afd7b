// The cookie queue (paper 001 sect. 3.3.1, Fig. 4): the receive descriptors
// a VI posts, as RDMA cookies, carried to the peer that will send into them.
// A ring of fixed-size slots in the sending side's memory, one slot per
// descriptor, indexed by descriptor number. A slot's first word is its tag
// (descriptor number + 1), written after the message: the tag is what
// publishes it, so there is no write pointer and a push is one message write
// plus one word. The reader's read pointer comes back lazily (an eighth of
// the ring at a time). A doorbell word with a tripwire is written only while
// the reader asks for it (a waiting deferred send, a send CQ).
// Thread safety: one thread at a time per end (the owning VI's lock).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "clan_emul/aperture.hpp"
#include "clan_emul/region.hpp"
#include "clan_emul/tripwire.hpp"
#include "via/wire.hpp"

namespace via {

// At the VI that posts receive descriptors: writes them into the peer's ring.
class CookieSender {
 public:
  // `words`: where in this VI's channel block the peer writes its read
  // pointer and its doorbell request (wire::kCkSenderBytes).
  explicit CookieSender(const std::byte* words) : words_(words) {}
  // The ring at `at` in the peer's block, mapped by `peer` (which must
  // outlive this object).
  clan::Errc attach(clan::Aperture& peer, size_t at, uint32_t slots);
  // Writes the message of descriptor number `pos` (len <= wire::kCkMessage).
  // kCorrupt if the peer's read pointer is impossible or leaves no room (a
  // peer that reads honestly always leaves room: see kCookieSlots).
  // kTimeout if the reader's endpoint stayed on the host past `hold` (paper
  // 004 sect. 3.2): the descriptor is not published (its tag unwritten),
  // push it again. A doorbell that times out is owed instead.
  clan::Errc push(uint64_t pos, const void* msg, size_t len,
                  clan::Deadline hold = clan::Deadline::never());
  // Rings an owed doorbell, waiting up to `hold`; true if none is owed.
  bool flush(clan::Deadline hold);
  bool owed() const { return doorbell_owed_ != 0; }

 private:
  const std::byte* words_;
  uint64_t doorbell_owed_ = 0;  // the doorbell's value, if its write timed out
  clan::Aperture* ring_ = nullptr;
  size_t ring_at_ = 0;
  uint32_t slots_ = 0;
};

// At the VI that sends: reads the peer's receive descriptors from its ring.
class CookieReceiver {
 public:
  // The ring at `at` in `block`, this VI's channel block (wire::ck_region_bytes(slots)).
  static clan::Result<std::unique_ptr<CookieReceiver>> create(clan::Nic& nic, const clan::Region& block,
                                                               size_t at, uint32_t slots);
  uint32_t slots() const { return slots_; }
  // The sender's words at `at` in the peer's block, mapped by `peer` (which
  // must outlive this object). `first`: the number of the first descriptor
  // the ring will carry (those before it came in the handshake).
  clan::Errc attach(clan::Aperture& peer, size_t at, uint64_t first);

  // The message of the next descriptor, in place (wire::kCkMessage bytes the
  // peer may still write: read each field once, check it), or null.
  const std::byte* peek() const;
  bool readable() const { return peek() != nullptr; }
  // Done with the message peek() returned (the read pointer goes lazily: one
  // that finds the peer's endpoint on the host is owed).
  void consume();
  // Writes an owed read pointer, waiting up to `hold`; true if none is owed.
  bool flush(clan::Deadline hold);
  bool owed() const { return owed_; }
  // Asks the peer to ring the doorbell after each push (on), or not. After
  // turning it on, check readable() again before waiting on the tripwire.
  // A request that finds the peer's endpoint on the host past `hold` is not
  // made (the next call asks again); a waiter's slice bounds what that costs.
  void want_doorbell(bool on, clan::Deadline hold = clan::Deadline::never());
  clan::Tripwire& tripwire() { return tripwire_; }

 private:
  const std::byte* ring_ = nullptr;  // in our block
  clan::Tripwire tripwire_;
  clan::Aperture* sender_ = nullptr;
  size_t sender_at_ = 0;
  uint32_t slots_ = 0;
  std::atomic<uint64_t> next_{0};  // written under the VI's lock, read by waiters
  bool want_ = false;
  bool owed_ = false;  // the read pointer's last write timed out
};

}  // namespace via
