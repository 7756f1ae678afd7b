#include "clan_emul/region.hpp"

#include <utility>

#include "clan_emul/nic.hpp"
#include "clan_emul/resident_set.hpp"

namespace clan {

Region::Region(Region&& o) noexcept { *this = std::move(o); }

Region& Region::operator=(Region&& o) noexcept {
  if (this != &o) {
    reset();
    nic_ = std::exchange(o.nic_, nullptr);
    index_ = o.index_;
    memory_ = std::move(o.memory_);
    cookie_ = o.cookie_;
  }
  return *this;
}

void Region::revoke() {
  if (!nic_) return;
  RegionSlot* slot = nic_->view().region(index_);
  store_region_state(slot->state, cookie_.generation, kRegionRevoked);
  // Writers on other hosts: their registration closes with it.
  nic_->close_wire_registration(index_);
  // Writers held for its endpoint's residency find the revocation at once.
  if (const uint32_t ep = slot->endpoint.load(std::memory_order_acquire); ep != 0) {
    wake_held_writers(nic_->view(), ep - 1);
  }
}

RdmaCookie Region::reissue() {
  if (!nic_) return cookie_;
  revoke();
  RegionSlot* slot = nic_->view().region(index_);
  uint32_t generation;
  {
    std::lock_guard lock(nic_->mu_);
    generation = ++nic_->region_generation_[index_];
  }
  slot->secret[0] = random_u64();
  slot->secret[1] = random_u64();
  store_region_state(slot->state, generation, kRegionLive);
  cookie_.generation = generation;
  cookie_.secret[0] = slot->secret[0];
  cookie_.secret[1] = slot->secret[1];
  return cookie_;
}

void Region::reset() {
  if (!nic_) return;
  nic_->release_region(index_);
  nic_ = nullptr;
  memory_.reset();
}

}  // namespace clan
