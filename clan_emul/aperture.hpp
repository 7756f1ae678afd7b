// An outgoing aperture: a mapping of a peer's exported region, obtained by
// importing its RDMA cookie. Writes through it are the emulated network
// writes: bounds-checked, checked against the exporter's current cookie
// generation (so revocation bites), and matched against the exporter's
// tripwire CAM. PIO writes are synchronous copies with release ordering and
// make no system call unless a tripwire they touch has a sleeping waiter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "clan_emul/cookie.hpp"
#include "clan_emul/deadline.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/nic_layout.hpp"
#include "clan_emul/shared_memory.hpp"
#include "clan_emul/wire/wire_link.hpp"

namespace clan {

class Nic;
struct PeerNic;

class Aperture {
 public:
  Aperture() = default;
  Aperture(Aperture&& o) noexcept;
  Aperture& operator=(Aperture&& o) noexcept;
  ~Aperture() { reset(); }

  // PIO: copies `len` bytes to `offset` of the peer's region.
  // A write to a peer whose endpoint is not resident is held until it is
  // (paper 004 sect. 4.1), or until `hold` passes: kTimeout, nothing written.
  Errc write(size_t offset, const void* src, size_t len, Deadline hold = Deadline::never());
  // PIO of one aligned 64-bit word as a single atomic release store: the way
  // a protocol publishes a pointer after the data it covers.
  Errc write_word(size_t offset, uint64_t value, Deadline hold = Deadline::never());
  // A hint, not a write: brings the cache lines of [offset, offset+len) into
  // this CPU's cache for writing, ahead of a write that will come. Out of
  // range or on a closed aperture it does nothing.
  void prefetch_for_write(size_t offset, size_t len) const;

  // Waits until every write made so far through this aperture's connection
  // (every aperture onto the same NIC of another host shares it) has landed
  // at the exporter: what a protocol does before telling the peer, by
  // another channel, that it has written. Onto a NIC of this host writes
  // land as they are made: kOk at once. kClosed, kTimeout.
  Errc fence(Deadline deadline) const;
  // Whether a write would find the exporter's endpoint resident now.
  bool resident() const;
  // Waits up to `hold` for the exporter's endpoint to be resident, writing
  // nothing: kOk once it is, else as write() (a writer whose writes were
  // held waits here without the locks it writes under, then writes again).
  Errc wait_resident(Deadline hold);

  size_t size() const { return size_; }
  bool valid() const { return nic_ != nullptr; }
  // Whether its writes go over the wire to a NIC of another host.
  bool remote() const { return link_ != nullptr; }
  const RdmaCookie& cookie() const { return cookie_; }
  // kOk while the cookie is still good; the revocation error otherwise.
  Errc check() const;
  void reset();

 private:
  friend class Nic;
  Errc state_error(uint64_t state) const;
  void match_tripwires(size_t offset, size_t len) const;
  // The slow path of a write whose check failed: holds the writer while the
  // exporter's endpoint is not resident (aperture_residency.cpp).
  Errc admit(uint64_t state, Deadline hold);
  Errc hold_until_resident(Deadline hold);
  // The fast path's residency marks, in the lines it reads anyway.
  void mark_use() {
    if (slot_->referenced.load(std::memory_order_relaxed) == 0) {
      slot_->referenced.store(1, std::memory_order_relaxed);
    }
    if (!own_slot_) return;
    if (own_slot_->referenced.load(std::memory_order_relaxed) == 0) {
      own_slot_->referenced.store(1, std::memory_order_relaxed);
    }
    if (own_slot_->residency.load(std::memory_order_relaxed) != static_cast<uint32_t>(Residency::kOnNic)) {
      own_endpoint_fault();
    }
  }
  void own_endpoint_fault();
  // An aperture over the wire (aperture_remote.cpp) points slot_ at a slot
  // whose state no cookie matches, so its writes leave the local fast path
  // at its one comparison and go to the wire there.
  static RegionSlot& remote_slot();
  Errc remote_write(size_t offset, const void* src, size_t len, Deadline hold);
  Errc remote_check() const;

  Nic* nic_ = nullptr;
  std::shared_ptr<PeerNic> peer_;
  SharedMemory memory_;
  std::byte* base_ = nullptr;
  size_t size_ = 0;
  RegionSlot* slot_ = nullptr;
  uint64_t expect_state_ = 0;
  RdmaCookie cookie_{};
  bool counted_ = true;  // against the NIC's max_imports (no endpoint)
  uint32_t own_endpoint_ = 0;
  EndpointSlot* own_slot_ = nullptr;  // the endpoint this aperture belongs to
  std::shared_ptr<wire::WireLink> link_;  // over the wire: the link to the exporter's NIC
  uint64_t key_ = 0;                      // over the wire: the registration's key
};

}  // namespace clan
