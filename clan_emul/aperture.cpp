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
    link_ = std::move(o.link_);
    key_ = o.key_;
  }
  return *this;
}

void Aperture::reset() {
  if (!nic_) return;
  memory_.reset();
  if (counted_) nic_->release_import();
  own_slot_ = nullptr;
  peer_.reset();
  link_.reset();
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
  if (link_) return remote_check();
  // A region that is not resident is still good: writes wait for it.
  uint64_t s = without_residency(slot_->state.load(std::memory_order_acquire));
  return s == expect_state_ ? Errc::kOk : state_error(s);
}

void Aperture::match_tripwires(size_t offset, size_t len) const {
  fire_region_tripwires(peer_->view, slot_, cookie_.region, offset, len);
}

Errc Aperture::write(size_t offset, const void* src, size_t len, Deadline hold) {
  if (!nic_) return Errc::kClosed;
  if (offset > size_ || len > size_ - offset) return Errc::kOutOfRange;
  uint64_t s = slot_->state.load(std::memory_order_acquire);
  if (s != expect_state_) {
    if (link_) return remote_write(offset, src, len, hold);
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
    if (link_) return remote_write(offset, &value, 8, hold);
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
