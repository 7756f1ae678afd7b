#include "clan_emul/aperture.hpp"

#include <cstring>
#include <utility>

#include "clan_emul/nic.hpp"
#include "clan_emul/tripwire.hpp"

namespace clan {

Aperture::Aperture(Aperture&& o) noexcept { *this = std::move(o); }

Aperture& Aperture::operator=(Aperture&& o) noexcept {
  if (this != &o) {
    reset();
    nic_ = std::exchange(o.nic_, nullptr);
    peer_ = std::move(o.peer_);
    memory_ = std::move(o.memory_);
    base_ = std::exchange(o.base_, nullptr);
    size_ = std::exchange(o.size_, 0);
    slot_ = std::exchange(o.slot_, nullptr);
    expect_state_ = o.expect_state_;
    cookie_ = o.cookie_;
    counted_ = o.counted_;
    own_endpoint_ = o.own_endpoint_;
    own_slot_ = std::exchange(o.own_slot_, nullptr);
  }
  return *this;
}

void Aperture::reset() {
  if (!nic_) return;
  memory_.reset();
  if (counted_) nic_->release_import();
  own_slot_ = nullptr;
  peer_.reset();
  nic_ = nullptr;
  base_ = nullptr;
  size_ = 0;
}

Errc Aperture::state_error(uint64_t state) const {
  if (region_generation(state) != cookie_.generation) return Errc::kStaleCookie;
  if (region_kind(state) == kRegionRevoked) return Errc::kRevokedCookie;
  return Errc::kStaleCookie;
}

Errc Aperture::check() const {
  if (!nic_) return Errc::kClosed;
  // A region that is not resident is still good: writes wait for it.
  uint64_t s = without_residency(slot_->state.load(std::memory_order_acquire));
  return s == expect_state_ ? Errc::kOk : state_error(s);
}

void Aperture::match_tripwires(size_t offset, size_t len) const {
  // Walk the exporter's CAM entries for this region. The list lives in the
  // peer's memory: bound the walk and check every index before use.
  const NicView& v = peer_->view;
  const uint32_t region = cookie_.region + 1;
  uint32_t i = slot_->tw_head.load(std::memory_order_acquire);
  for (uint32_t steps = 0; i != 0 && i <= v.max_tripwires && steps < v.max_tripwires; ++steps) {
    TripwireSlot* t = v.tripwire(i - 1);
    if (t->region.load(std::memory_order_acquire) == region) {
      uint64_t o = t->offset.load(std::memory_order_relaxed);
      if (o < offset + len && offset < o + 8) fire_tripwire(v, t);
    }
    i = t->next.load(std::memory_order_acquire);
  }
}

Errc Aperture::write(size_t offset, const void* src, size_t len, Deadline hold) {
  if (!nic_) return Errc::kClosed;
  if (offset > size_ || len > size_ - offset) return Errc::kOutOfRange;
  uint64_t s = slot_->state.load(std::memory_order_acquire);
  if (s != expect_state_) {
    if (Errc e = admit(s, hold); e != Errc::kOk) return e;
  }
  mark_use();
  // memcpy from a null source is undefined even for no bytes, and an empty
  // message may well have no buffer.
  if (len != 0) std::memcpy(base_ + offset, src, len);
  // Release: whoever sees a later write (or a firing) sees these bytes.
  std::atomic_thread_fence(std::memory_order_release);
  match_tripwires(offset, len);
  return Errc::kOk;
}

Errc Aperture::write_word(size_t offset, uint64_t value, Deadline hold) {
  if (!nic_) return Errc::kClosed;
  if (offset > size_ || size_ - offset < 8) return Errc::kOutOfRange;
  if (offset % 8 != 0) return Errc::kInvalidArgument;
  uint64_t s = slot_->state.load(std::memory_order_acquire);
  if (s != expect_state_) {
    if (Errc e = admit(s, hold); e != Errc::kOk) return e;
  }
  mark_use();
  std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(base_ + offset))
      .store(value, std::memory_order_release);
  match_tripwires(offset, 8);
  return Errc::kOk;
}

void Aperture::prefetch_for_write(size_t offset, size_t len) const {
  if (!base_ || offset > size_ || len > size_ - offset) return;
  for (size_t at = offset & ~size_t{63}; at < offset + len; at += 64) __builtin_prefetch(base_ + at, 1);
}

}  // namespace clan
