#include "orb_transports/common/client_slots.hpp"

namespace clanorb {

ClientSlots::Slot& ClientSlots::Slot::operator=(Slot&& o) noexcept {
  if (this != &o) {
    give_back();
    owner_ = std::move(o.owner_);
    client_ = std::move(o.client_);
  }
  return *this;
}

void ClientSlots::Slot::give_back() {
  if (owner_) owner_->give_back(client_);
  owner_.reset();
}

std::shared_ptr<ClientSlots> ClientSlots::create(uint32_t cap) {
  return std::shared_ptr<ClientSlots>(new ClientSlots(cap));
}

std::optional<ClientSlots::Slot> ClientSlots::take(const std::string& client) {
  {
    std::lock_guard lock(mu_);
    uint32_t& n = held_[client];
    if (cap_ != 0 && n >= cap_) return std::nullopt;  // n > 0: the entry was there
    ++n;
  }
  Slot s;
  s.owner_ = shared_from_this();
  s.client_ = client;
  return s;
}

size_t ClientSlots::clients() const {
  std::lock_guard lock(mu_);
  return held_.size();
}

void ClientSlots::give_back(const std::string& client) {
  std::lock_guard lock(mu_);
  auto it = held_.find(client);
  if (it != held_.end() && --it->second == 0) held_.erase(it);
}

}  // namespace clanorb
