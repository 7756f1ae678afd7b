#include "clan_emul/endpoint.hpp"

#include <utility>

#include "clan_emul/nic.hpp"

namespace clan {

Endpoint::Endpoint(Endpoint&& o) noexcept { *this = std::move(o); }

Endpoint& Endpoint::operator=(Endpoint&& o) noexcept {
  if (this != &o) {
    reset();
    nic_ = std::exchange(o.nic_, nullptr);
    index_ = o.index_;
  }
  return *this;
}

Residency Endpoint::residency() const {
  if (!nic_) return Residency::kFree;
  return static_cast<Residency>(
      nic_->view().endpoint(index_)->residency.load(std::memory_order_acquire));
}

void Endpoint::reset() {
  if (!nic_) return;
  nic_->release_endpoint(index_);
  nic_ = nullptr;
}

}  // namespace clan
