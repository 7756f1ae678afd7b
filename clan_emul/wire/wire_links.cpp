// The wire's connections: connecting to a NIC of another host, accepting
// one, and a link going down. A link's libfabric endpoint carries the
// link's id as its context, so a late event or completion for a link that
// has gone finds nothing rather than freed memory.
#include <rdma/fi_errno.h>

#include "clan_emul/wire/fi_loader.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/wire/fi_error.hpp"
#include "clan_emul/wire/wire_address.hpp"
#include "clan_emul/wire/wire_engine.hpp"
#include "clan_emul/wire/wire_hints.hpp"
#include "clan_emul/wire/wire_message.hpp"

namespace clan::wire {

std::shared_ptr<WireLink> WireEngine::link_by_id(uint64_t id) const {
  std::lock_guard lock(links_mu_);
  auto it = links_.find(id);
  return it == links_.end() ? nullptr : it->second;
}

bool WireEngine::knows(uint64_t nic_id) const {
  std::lock_guard lock(links_mu_);
  return addresses_.count(nic_id) != 0;
}

Errc WireEngine::make_endpoint(WireLink& link, fi_info* info) {
  int r = fi_endpoint(domain_, info, &link.ep_, make_context(link.id(), 0));
  if (r != 0) return fi_fail(r, "wire: fi_endpoint");
  if ((r = fi_ep_bind(link.ep_, &eq_->fid, 0)) != 0) return fi_fail(r, "wire: fi_ep_bind (event queue)");
  if ((r = fi_ep_bind(link.ep_, &cq_->fid, FI_TRANSMIT | FI_RECV)) != 0) {
    return fi_fail(r, "wire: fi_ep_bind (completion queue)");
  }
  if ((r = fi_enable(link.ep_)) != 0) return fi_fail(r, "wire: fi_enable");
  for (size_t slot = 0; slot < WireLink::kReceiveSlots; ++slot) {
    if (Errc e = link.post_receive(slot); e != Errc::kOk) return e;
  }
  return Errc::kOk;
}

namespace {

using LinkLock = std::unique_lock<std::mutex>;

// Waits until `link` is no longer connecting; false at the deadline.
bool await_settled(std::condition_variable& cv, LinkLock& lock, const WireLink& link, Deadline deadline) {
  auto settled = [&] { return link.state() != WireLink::State::kConnecting; };
  if (deadline.is_never()) {
    cv.wait(lock, settled);
    return true;
  }
  return cv.wait_until(lock, deadline.when(), settled);
}

// The provider's view of `to` ("host:port"): name resolution, which may
// take as long as DNS does, so never under the links' lock.
Result<fi_info*> resolve(const std::string& provider, const std::string& to) {
  auto where = parse_wire_address(to);
  if (!where) return where.error();
  if (where->port == 0) return set_error(Errc::kInvalidArgument, 0, "wire: '%s' has no port", to.c_str());
  HintsPtr hints = make_hints(provider);
  fi_info* info = nullptr;
  const std::string service = where->service();
  if (int r = clan_fi_getinfo(kFiVersion, where->host.c_str(), service.c_str(), 0, hints.get(), &info); r != 0) {
    return fi_fail(r, "wire: cannot reach NIC at '%s' (fi_getinfo)", to.c_str());
  }
  return info;
}

}  // namespace

// The live or connecting link to `nic_id`: nullptr if there is none (or it
// went down while connecting); kTimeout if it is still connecting at the
// deadline.
Result<std::shared_ptr<WireLink>> WireEngine::existing_link(LinkLock& lock, uint64_t nic_id, Deadline deadline) {
  auto it = by_nic_.find(nic_id);
  if (it == by_nic_.end() || it->second->state() == WireLink::State::kDown) return std::shared_ptr<WireLink>();
  auto link = it->second;
  if (!await_settled(link_cv_, lock, *link, deadline)) {
    return set_error(Errc::kTimeout, 0, "wire: NIC %016llx is still connecting at the deadline",
                     static_cast<unsigned long long>(nic_id));
  }
  return link->state() == WireLink::State::kUp ? link : std::shared_ptr<WireLink>();
}

Result<std::shared_ptr<WireLink>> WireEngine::link_to(uint64_t nic_id, const std::string& address,
                                                      Deadline deadline) {
  LinkLock lock(links_mu_);
  auto existing = existing_link(lock, nic_id, deadline);
  if (!existing || existing.value()) return existing;
  std::string to = address;
  if (to.empty()) {
    auto known = addresses_.find(nic_id);
    if (known == addresses_.end()) {
      return set_error(Errc::kInvalidArgument, 0, "wire: NIC %016llx was never reached",
                       static_cast<unsigned long long>(nic_id));
    }
    to = known->second;
  }
  lock.unlock();
  auto info = resolve(config_.provider, to);
  if (!info) return info.error();
  lock.lock();
  // Another thread may have linked to the NIC meanwhile: its link is ours.
  existing = existing_link(lock, nic_id, deadline);
  if (!existing || existing.value()) {
    clan_fi_freeinfo(info.value());
    return existing;
  }
  addresses_[nic_id] = to;
  return connect_link(lock, nic_id, to, info.value(), deadline);
}

// Makes the link to `nic_id` at `to` from the provider's `info` (freed
// here) and waits for it to come up.
Result<std::shared_ptr<WireLink>> WireEngine::connect_link(LinkLock& lock, uint64_t nic_id, const std::string& to,
                                                           fi_info* info, Deadline deadline) {
  auto link = std::make_shared<WireLink>(*this, next_link_++, nic_id, config_.staging_bytes, inject_size_);
  links_[link->id()] = link;
  by_nic_[nic_id] = link;
  count_links();
  Errc e = make_endpoint(*link, info);
  if (e == Errc::kOk) {
    if (int r = fi_connect(link->ep_, info->dest_addr, nullptr, 0); r != 0) {
      e = fi_fail(r, "wire: fi_connect to '%s'", to.c_str());
    }
  }
  clan_fi_freeinfo(info);
  if (e != Errc::kOk) {
    links_.erase(link->id());
    by_nic_.erase(nic_id);
    count_links();
    return e;
  }
  await_settled(link_cv_, lock, *link, deadline);
  if (link->state() == WireLink::State::kUp) return link;
  const Errc why = link->state() == WireLink::State::kDown ? link->down_reason() : Errc::kTimeout;
  lock.unlock();
  link_down(link->id(), why);
  return set_error(why, 0, "wire: cannot connect to NIC at '%s': %s", to.c_str(), to_string(why));
}

void WireEngine::accept(fi_info* info) {
  std::lock_guard lock(links_mu_);
  // Each link holds a descriptor, an endpoint and its receives: a peer
  // that connects without end is refused past the bound.
  if (links_.size() >= kMaxLinks) {
    fi_reject(pep_, info->handle, nullptr, 0);
    links_refused_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  auto link = std::make_shared<WireLink>(*this, next_link_++, 0, 0, inject_size_);
  links_[link->id()] = link;
  if (make_endpoint(*link, info) != Errc::kOk || fi_accept(link->ep_, nullptr, 0) != 0) {
    links_.erase(link->id());
    if (link->ep_) fi_reject(pep_, info->handle, nullptr, 0);
    return;
  }
  count_links();
  links_accepted_.fetch_add(1, std::memory_order_relaxed);
}

void WireEngine::link_down(uint64_t id, Errc reason) {
  std::shared_ptr<WireLink> link;
  {
    std::lock_guard lock(links_mu_);
    auto it = links_.find(id);
    if (it == links_.end()) return;
    link = it->second;
    links_.erase(it);
    count_links();
    if (auto n = by_nic_.find(link->peer_nic()); n != by_nic_.end() && n->second == link) by_nic_.erase(n);
    link_cv_.notify_all();
  }
  links_broken_.fetch_add(1, std::memory_order_relaxed);
  link->set_down(reason);
  {
    std::lock_guard lock(requests_mu_);
    requests_cv_.notify_all();
  }
}

Errc WireEngine::validate_import(WireLink& link, const RdmaCookie& cookie, Deadline deadline, bool* replied) {
  uint64_t request;
  {
    std::lock_guard lock(requests_mu_);
    request = next_request_++;
    requests_[request].link = link.id();
  }
  const auto msg = encode_wire_message(WireMessage{WireOp::kImportRequest, Errc::kOk, request, cookie});
  Errc e = link.send(msg.data(), msg.size(), deadline);
  std::unique_lock lock(requests_mu_);
  auto answered = [&] { return requests_[request].status.has_value() || link.state() == WireLink::State::kDown; };
  if (e == Errc::kOk) {
    if (deadline.is_never()) {
      requests_cv_.wait(lock, answered);
    } else if (!requests_cv_.wait_until(lock, deadline.when(), answered)) {
      e = Errc::kTimeout;
    }
  }
  if (replied) *replied = requests_[request].status.has_value();
  if (e == Errc::kOk) e = requests_[request].status.value_or(Errc::kClosed);
  requests_.erase(request);
  return e;
}

}  // namespace clan::wire
