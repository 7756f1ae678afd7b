#include "orb_transports/via/via_endpoint.hpp"

#include <algorithm>
#include <utility>

#include "clan_emul/error_detail.hpp"
#include "orb_transports/via/via_connection.hpp"

OMNI_USING_NAMESPACE(omni)

namespace clanorb {

namespace {
// Completion queue entries: one per received message, consumed at once.
constexpr VIP_ULONG kCqEntries = 4096;

// Whether a VipConnectAccept that returned `r` left its request pending
// (see vipl.h) rather than answered.
bool vip_accept_leaves_request_pending(VIP_RETURN r) {
  return r == VIP_INVALID_PARAMETER || r == VIP_INVALID_STATE || r == VIP_INVALID_RELIABILITY_LEVEL ||
         r == VIP_INVALID_MTU;
}

// A connect request not yet answered: refused if it is dropped unaccepted
// (e.g. pending at shutdown).
struct PendingRequest {
  explicit PendingRequest(VIP_CONN_HANDLE h) : handle(h) {}
  PendingRequest(const PendingRequest&) = delete;
  PendingRequest& operator=(const PendingRequest&) = delete;
  ~PendingRequest() {
    if (handle) VipConnectReject(handle);
  }
  VIP_CONN_HANDLE handle;
};
}  // namespace

ViaEndpoint::~ViaEndpoint() {
  // Every connection is gone (each held a reference), so no VI uses the CQ.
  if (cq_) VipDestroyCQ(cq_);
  if (nic_ && port_claimed_) nic_->free_port(port_);
}

std::string ViaEndpoint::open_listener() {
  nic_ = ViaNic::get(node_);
  if (!nic_) return "";
  // The first VipConnectWait on a discriminator starts listening; a zero
  // timeout only does that. Port 0: the first one free in this process.
  for (uint32_t p = port_ ? port_ : 1; p <= 65535; ++p) {
    if (!nic_->claim_port(static_cast<uint16_t>(p))) {
      if (port_ != 0) break;
      continue;
    }
    ViaNetAddress local(nic_->node(), static_cast<uint16_t>(p));
    ViaNetAddress remote;
    VIP_VI_ATTRIBUTES attrs{};
    VIP_CONN_HANDLE request = nullptr;
    clan::clear_error();
    VIP_RETURN r = VipConnectWait(nic_->handle(), local.get(), 0, remote.get(), &attrs, &request);
    if (r == VIP_SUCCESS) VipConnectReject(request);  // cannot happen before we listen
    if (r == VIP_SUCCESS || r == VIP_TIMEOUT) {
      port_ = static_cast<uint16_t>(p);
      port_claimed_ = true;
      return nic_->node();
    }
    nic_->free_port(static_cast<uint16_t>(p));
    if (port_ != 0) {
      omniORB::logger l;
      l << "giop:via: cannot listen on port " << p << " of node '" << nic_->node().c_str()
        << "': " << via_failure(r).c_str() << "\n";
      return "";
    }
  }
  omniORB::logger l;
  l << "giop:via: port " << port_ << " is taken in this process\n";
  return "";
}

std::optional<MonitoredEndpoint::Acceptor> ViaEndpoint::next_request(clan::Deadline deadline) {
  ViaNetAddress local(nic_->node(), port_);
  ViaNetAddress remote;
  VIP_VI_ATTRIBUTES attrs{};
  VIP_CONN_HANDLE request = nullptr;
  const int ms = deadline.remaining_ms();
  clan::clear_error();
  VIP_RETURN r = VipConnectWait(nic_->handle(), local.get(),
                                ms < 0 ? VIP_INFINITE : static_cast<VIP_ULONG>(ms), remote.get(),
                                &attrs, &request);
  if (r == VIP_TIMEOUT) return Acceptor();
  if (r != VIP_SUCCESS) {
    omniORB::logger l;
    l << "giop:via: " << address() << " stops accepting: " << via_failure(r).c_str() << "\n";
    return std::nullopt;
  }
  auto pending = std::make_shared<PendingRequest>(request);
  std::string peer = "giop:via:" + remote.host();
  return Acceptor{remote.host(),
                  [this, pending, peer] { return accept(std::exchange(pending->handle, nullptr), peer); }};
}

giopConnection* ViaEndpoint::accept(VIP_CONN_HANDLE request, const std::string& peer) {
  auto c = std::make_unique<ViaConnection>(nic_, this);
  const bool opened = c->open();
  clan::clear_error();  // open() logged its own failure
  VIP_RETURN r = opened ? VipConnectAccept(request, c->vi()) : VipConnectReject(request);
  // A request whose attributes do not match ours stays pending (vipl.h):
  // refuse it, so that the client hears at once rather than at its timeout.
  if (opened && vip_accept_leaves_request_pending(r)) VipConnectReject(request);
  if (opened && r == VIP_SUCCESS && !c->post_receives()) return nullptr;
  if (!opened || r != VIP_SUCCESS) {
    log_refusal(peer, opened ? via_failure(r) : "cannot set up the connection (logged above)");
    return nullptr;
  }
  c->set_addresses(address(), peer);
  return c.release();
}

void ViaEndpoint::close_listener() {
  // The acceptor thread has stopped: nobody waits on the discriminator.
  // Clients connecting from now on are refused at once.
  if (!nic_ || !port_claimed_) return;
  ViaNetAddress local(nic_->node(), port_);
  VipClanStopListening(nic_->handle(), local.get());
}

bool ViaEndpoint::open_events() {
  clan::clear_error();
  VIP_RETURN r = VipCreateCQ(nic_->handle(), kCqEntries, &cq_);
  if (r != VIP_SUCCESS) {
    omniORB::logger l;
    l << "giop:via: cannot create a completion queue: " << via_failure(r).c_str() << "\n";
    return false;
  }
  return true;
}

clan::Result<uint32_t> ViaEndpoint::add_source() {
  std::lock_guard lock(mu_);
  return next_source_++;
}

void ViaEndpoint::signal(uint32_t source) {
  {
    std::lock_guard lock(mu_);
    signalled_.push_back(source);
  }
  VipClanCQWake(cq_);
}

void ViaEndpoint::attach(VIP_VI_HANDLE vi, uint32_t source) {
  std::lock_guard lock(mu_);
  vis_[vi] = source;
}

void ViaEndpoint::detach(VIP_VI_HANDLE vi) {
  std::lock_guard lock(mu_);
  vis_.erase(vi);
}

std::optional<uint32_t> ViaEndpoint::next_event(clan::Deadline deadline) {
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (!signalled_.empty()) {
        uint32_t s = signalled_.back();
        signalled_.pop_back();
        return s;
      }
    }
    if (!completed_.empty()) {
      const uint32_t s = completed_.front();
      completed_.pop_front();
      return s;
    }
    VIP_VI_HANDLE vi = nullptr;
    VIP_BOOLEAN recv = VIP_FALSE;
    const int ms = deadline.remaining_ms();
    VIP_RETURN r = VipCQWait(cq_, ms < 0 ? VIP_INFINITE : static_cast<VIP_ULONG>(ms), &vi, &recv);
    if (r == VIP_NOT_DONE) continue;  // woken: look at what was signalled
    if (r != VIP_SUCCESS) return std::nullopt;  // VIP_TIMEOUT: the deadline
    // Every entry already there too, each VI once: one wake-up for many
    // entries. (VIPL keeps at most one receive entry per armed VI; with one
    // per message, and one taken per wake-up, they piled up by the hundred
    // thousand under many clients and buried new connections' entries.)
    size_t taken = 0;  // bounded, so that signals are not held up for long
    do {
      std::lock_guard lock(mu_);
      auto it = vis_.find(vi);
      if (it != vis_.end() &&  // else a VI gone meanwhile
          std::find(completed_.begin(), completed_.end(), it->second) == completed_.end()) {
        completed_.push_back(it->second);
      }
    } while (++taken < kCqEntries && VipCQDone(cq_, &vi, &recv) == VIP_SUCCESS);
  }
}

}  // namespace clanorb
