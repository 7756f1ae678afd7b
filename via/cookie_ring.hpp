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
  static clan::Result<std::unique_ptr<CookieSender>> create(clan::Nic& nic);
  // Where the peer writes its read pointer and its doorbell request.
  clan::RdmaCookie cookie() const { return region_.cookie(); }
  clan::Errc attach(clan::Nic& nic, const clan::RdmaCookie& ring, uint32_t slots);
  // Writes the message of descriptor number `pos` (len <= wire::kCkMessage).
  // kCorrupt if the peer's read pointer is impossible or leaves no room (a
  // peer that reads honestly always leaves room: see kCookieSlots).
  clan::Errc push(uint64_t pos, const void* msg, size_t len);

 private:
  clan::Region region_;
  clan::Aperture ring_;
  uint32_t slots_ = 0;
};

// At the VI that sends: reads the peer's receive descriptors from its ring.
class CookieReceiver {
 public:
  static clan::Result<std::unique_ptr<CookieReceiver>> create(clan::Nic& nic, uint32_t slots);
  clan::RdmaCookie cookie() const { return region_.cookie(); }
  uint32_t slots() const { return slots_; }
  // `first`: the number of the first descriptor the ring will carry (those
  // before it came in the handshake).
  clan::Errc attach(clan::Nic& nic, const clan::RdmaCookie& sender, uint64_t first);

  // The message of the next descriptor, in place (wire::kCkMessage bytes the
  // peer may still write: read each field once, check it), or null.
  const std::byte* peek() const;
  bool readable() const { return peek() != nullptr; }
  // Done with the message peek() returned.
  void consume();
  // Asks the peer to ring the doorbell after each push (on), or not. After
  // turning it on, check readable() again before waiting on the tripwire.
  void want_doorbell(bool on);
  clan::Tripwire& tripwire() { return tripwire_; }

 private:
  clan::Region region_;
  clan::Tripwire tripwire_;
  clan::Aperture sender_;
  uint32_t slots_ = 0;
  std::atomic<uint64_t> next_{0};  // written under the VI's lock, read by waiters
  bool want_ = false;
};

}  // namespace via
