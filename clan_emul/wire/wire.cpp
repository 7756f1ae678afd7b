#include "clan_emul/wire/wire.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <new>
#include <vector>

#include "clan_emul/error_detail.hpp"
#include "clan_emul/spin_wait.hpp"
#include "clan_emul/wire/wire_engine.hpp"

namespace clan::wire {
namespace {

// The open wires a spinning waiter polls. Registered and unregistered
// under the lock; the hook reads the list under it too, with a try-lock,
// so a spin never waits for a wire opening or closing. Never destroyed: a
// NIC that lives until the exit handlers (in a static of its program)
// unregisters its wire after the statics made after it are gone.
std::mutex open_mu;
std::vector<WireEngine*>& open_wires() {
  static auto* wires = new std::vector<WireEngine*>;
  return *wires;
}

// A fork()ed child owns none of its parent's wires (its copy of a NIC
// leaves the wire alone): its waits must not read the parent's queues,
// whose sockets it shares, nor take a lock a parent's thread held at fork.
void forget_wires_in_child() {
  spin_progress_hook.store(nullptr, std::memory_order_relaxed);
  spin_sleep_hook.store(nullptr, std::memory_order_relaxed);
  // The child has one thread: the lock is remade, free, whoever held it.
  new (&open_mu) std::mutex;
  open_wires().clear();
}

void register_wire(WireEngine* e) {
  static const bool at_fork = (::pthread_atfork(nullptr, nullptr, &forget_wires_in_child), true);
  (void)at_fork;
  std::lock_guard lock(open_mu);
  open_wires().push_back(e);
  spin_progress_hook.store(&poll_open_wires, std::memory_order_release);
  spin_sleep_hook.store(&kick_open_wires, std::memory_order_release);
}

void unregister_wire(WireEngine* e) {
  std::lock_guard lock(open_mu);
  auto& wires = open_wires();
  wires.erase(std::remove(wires.begin(), wires.end(), e), wires.end());
  if (wires.empty()) {
    spin_progress_hook.store(nullptr, std::memory_order_release);
    spin_sleep_hook.store(nullptr, std::memory_order_release);
  }
}

}  // namespace

void poll_open_wires() {
  std::unique_lock lock(open_mu, std::try_to_lock);
  if (!lock.owns_lock()) return;
  for (WireEngine* e : open_wires()) e->poll();
}

void kick_open_wires() {
  std::lock_guard lock(open_mu);
  for (WireEngine* e : open_wires()) e->kick();
}

Result<std::unique_ptr<Wire>> Wire::open(const WireConfig& config, WireOwner& owner) {
  auto engine = std::make_unique<WireEngine>(config, owner);
  if (Errc e = engine->open(); e != Errc::kOk) {
    return append_error_context(e, "cannot open the wire on '%s' (provider %s)", config.listen.c_str(),
                                config.provider.c_str());
  }
  register_wire(engine.get());
  return std::unique_ptr<Wire>(new Wire(std::move(engine)));
}

Wire::Wire(std::unique_ptr<WireEngine> engine) : engine_(std::move(engine)) {}

Wire::~Wire() { unregister_wire(engine_.get()); }

const std::string& Wire::address() const { return engine_->address_; }
const std::string& Wire::provider() const { return engine_->config_.provider; }

Result<std::shared_ptr<WireLink>> Wire::link_to(uint64_t nic_id, const std::string& address, Deadline deadline) {
  return engine_->link_to(nic_id, address, deadline);
}

bool Wire::knows(uint64_t nic_id) const { return engine_->knows(nic_id); }

Errc Wire::validate_import(WireLink& link, const RdmaCookie& cookie, Deadline deadline) {
  return engine_->validate_import(link, cookie, deadline);
}

// The exporting NIC takes a link's messages in order, so its answer to a
// check of the cookie comes after it delivered every write before it.
// Only an answer counts: a check that was never sent fences nothing.
Errc Wire::fence(WireLink& link, const RdmaCookie& cookie, Deadline deadline) {
  bool answered = false;
  const Errc e = engine_->validate_import(link, cookie, deadline, &answered);
  if (answered) return Errc::kOk;
  return e == Errc::kTimeout ? Errc::kTimeout : Errc::kClosed;
}

void Wire::close_registration(uint32_t region) { engine_->close_registration(region); }

void Wire::poll() { engine_->poll(); }

WireStats Wire::stats() const {
  WireStats s;
  s.links_accepted = engine_->links_accepted_.load();
  s.links_refused = engine_->links_refused_.load();
  s.links_broken = engine_->links_broken_.load();
  s.notices_dropped = engine_->notices_dropped_.load();
  s.messages_dropped = engine_->messages_dropped_.load();
  std::lock_guard lock(engine_->progress_mu_);
  s.registrations = engine_->registrations_.size();
  return s;
}

}  // namespace clan::wire
