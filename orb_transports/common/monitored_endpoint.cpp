#include "orb_transports/common/monitored_endpoint.hpp"

#include <cstring>

#include <algorithm>
#include <string_view>
#include <vector>

#include <omniORB4/internal/objectAdapter.h>
#include <omniORB4/omniURI.h>

#include "clan_emul/error_detail.hpp"
#include "orb_transports/common/ior_component.hpp"
#include "orb_transports/common/monitored_connection.hpp"

OMNI_USING_NAMESPACE(omni)

namespace clanorb {

using clan::Errc;
using namespace std::chrono_literals;

namespace {
// Event values that are not connections. Connection sources carry value 0
// and are looked up by source id.
constexpr uint64_t kPokeEvent = 1;
constexpr uint64_t kAcceptEvent = 2;
// A thread of the endpoint that waits for connect requests re-checks for
// shutdown this often.
constexpr auto kAcceptPoll = 100ms;
// The monitor looks at every connection this often: a readiness event that
// got lost then costs this much, not a client's timeout.
constexpr auto kSweepAfter = 200ms;
// The connection the monitor is handing to omniORB on this thread, if any:
// omniORB may delete it from inside the callback.
thread_local MonitoredConnection* dispatching = nullptr;

}  // namespace

MonitoredEndpoint::MonitoredEndpoint(const char* scheme, std::string node, uint16_t port)
    : node_(std::move(node)), port_(port), scheme_(scheme) {}

MonitoredEndpoint::~MonitoredEndpoint() = default;

void MonitoredEndpoint::release() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

std::string MonitoredEndpoint::open_listener() {
  fabric_ = Fabric::get(scheme_, node_);
  if (!fabric_) return "";
  // Port 0: the first free one on this node.
  for (uint32_t p = port_ ? port_ : 1; p <= 65535; ++p) {
    auto l = fabric_->oob().listen(static_cast<uint16_t>(p));
    if (l) {
      listener_ = std::move(l.value());
      port_ = static_cast<uint16_t>(p);
      return fabric_->node();
    }
    if (l.error() != Errc::kAddressInUse || port_ != 0) {
      omniORB::logger log;
      log << scheme_ << ": cannot listen on port " << p << ": " << clan::error_message(l.error()).c_str()
          << "\n";
      return "";
    }
  }
  return "";
}

std::optional<MonitoredEndpoint::Acceptor> MonitoredEndpoint::next_request(clan::Deadline deadline) {
  auto r = listener_->next_request(deadline);
  if (!r) {
    if (r.error() == Errc::kTimeout) return Acceptor();
    return std::nullopt;  // the connection manager stopped
  }
  // A transport that stays on its host refuses a node of another host that
  // reached it through the node's tcp listener.
  if (!scheme_crosses_hosts(scheme_) && !r->peer_on_this_host()) {
    if (omniORB::trace(10)) {
      omniORB::logger l;
      l << scheme_ << ": refusing node " << r->peer_node().c_str()
        << " of another host: " << scheme_ << " does not cross hosts\n";
    }
    r->reject();
    return Acceptor();
  }
  // Shared so the Acceptor is copyable; dropping it unused refuses the request.
  auto request = std::make_shared<clan::OobRequest>(std::move(r.value()));
  return Acceptor{request->peer_node(), [this, request] { return accept_one(*request); }};
}

bool MonitoredEndpoint::open_events() {
  auto q = fabric_->nic().create_event_queue();
  if (!q) {
    omniORB::logger l;
    l << scheme_ << ": cannot make the endpoint's event queue: " << clan::error_message(q.error()).c_str()
      << "\n";
    return false;
  }
  events_ = std::move(q.value());
  return true;
}

clan::Result<uint32_t> MonitoredEndpoint::add_source() { return events_.add_source(0); }

std::optional<uint32_t> MonitoredEndpoint::next_event(clan::Deadline deadline) {
  auto ev = events_.wait(deadline);
  if (!ev) return std::nullopt;
  return ev->source;
}

CORBA::Boolean MonitoredEndpoint::Bind() {
  const std::string node = open_listener();
  if (node.empty() || !open_events()) return 0;
  auto poke = add_source();
  auto accept = add_source();
  if (!poke || !accept) {
    omniORB::logger l;
    l << scheme_ << ": cannot add the endpoint's event sources: "
      << clan::error_message(poke ? accept.error() : poke.error()).c_str() << "\n";
    return 0;
  }
  poke_source_ = poke.value();
  accept_source_ = accept.value();
  clients_ = ClientSlots::create(fabric_options().max_connections_per_client);
  address_ = std::string(scheme_) + ":" + node + ":" + std::to_string(port_);
  addresses_.length(1);
  addresses_[0] = address_.c_str();
  acceptor_ = std::thread([this] { accept_loop(); });
  if (omniORB::trace(5)) {
    omniORB::logger l;
    l << scheme_ << " endpoint bound: " << address_.c_str() << "\n";
  }
  return 1;
}

CORBA::Boolean MonitoredEndpoint::publish(const orbServer::PublishSpecs& specs, CORBA::Boolean all_specs,
                                     CORBA::Boolean, orbServer::EndpointList& published) {
  CORBA::Boolean result = 0;
  for (CORBA::ULong j = 0; j < specs.length(); ++j) {
    const char* spec = specs[j];
    std::string to_add;
    const std::string prefix = std::string(scheme_) + ":";
    if (std::string_view(spec).starts_with(prefix)) {
      to_add = std::string_view(spec).size() == prefix.size() ? address_ : spec;
    } else if (no_publish()) {
      continue;
    } else if (omni::strMatch(spec, "addr")) {
      to_add = address_;
    } else {
      continue;
    }
    if (!omniObjAdapter::endpointInList(to_add.c_str(), published)) {
      giopEndpoint::addToIOR(to_add.c_str());
      published.length(published.length() + 1);
      published[published.length() - 1] = to_add.c_str();
    }
    result = 1;
    if (!all_specs) break;
  }
  return result;
}

void MonitoredEndpoint::accept_loop() {
  while (!stopping_.load(std::memory_order_acquire)) {
    auto r = next_request(clan::Deadline::after(kAcceptPoll));
    if (!r) break;     // the listener stopped
    if (!*r) continue;  // timeout
    {
      std::lock_guard lock(pending_mu_);
      pending_.push_back(std::move(*r));
    }
    signal(accept_source_);
  }
}

giopConnection* MonitoredEndpoint::AcceptAndMonitor(giopConnection::notifyReadable_t func,
                                               void* cookie) {
  notify_ = func;
  cookie_ = cookie;
  for (;;) {
    if (poked_.exchange(false, std::memory_order_acq_rel)) return nullptr;
    // New connections first.
    for (;;) {
      Acceptor accept;
      {
        std::lock_guard lock(pending_mu_);
        if (pending_.empty()) break;
        accept = std::move(pending_.front());
        pending_.pop_front();
        if (!pending_.empty()) signal(accept_source_);
      }
      if (giopConnection* c = admit(accept)) return c;
    }
    // The sweep runs on a clock of its own: a lost event on one connection
    // must not wait for the others to fall quiet.
    const auto now = clan::Clock::now();
    if (now >= next_sweep_) {
      // The events already queued first (a bounded number, so that a Poke
      // is not held up): only what they do not cover counts.
      for (int i = 0; i < 256; ++i) {
        auto queued = next_event(clan::Deadline::already_expired());
        if (!queued) break;
        if (*queued != poke_source_ && *queued != accept_source_) dispatch(*queued);
      }
      sweep();
      next_sweep_ = now + kSweepAfter;
      continue;  // a poke or a connect request may have been among them
    }
    auto source = next_event(clan::Deadline(next_sweep_));
    if (!source || *source == poke_source_ || *source == accept_source_) continue;
    dispatch(*source);
  }
}

giopConnection* MonitoredEndpoint::admit(Acceptor& request) {
  std::optional<ClientSlots::Slot> slot = clients_->take(request.client);
  if (!slot) {
    const std::string cap = std::to_string(clients_->cap());
    log_refusal(request.client, "it has " + cap +
                                    " connections to this endpoint, the most one client may have "
                                    "(-ORBclanMaxConnectionsPerClient " + cap + ")");
    return nullptr;
  }
  giopConnection* c = request.accept();
  if (auto* m = dynamic_cast<MonitoredConnection*>(c)) m->hold(std::move(*slot));
  return c;
}

void MonitoredEndpoint::log_refusal(const std::string& client, const std::string& why) {
  const std::optional<uint64_t> held_back = refusals_.admit(clan::Clock::now());
  if (!held_back || !omniORB::trace(1)) return;
  omniORB::logger l;
  l << scheme_ << ": " << address_.c_str() << " refused a connection from " << client.c_str() << ": "
    << why.c_str();
  if (*held_back) l << " (and " << *held_back << " more refused connections not logged)";
  l << "\n";
}

void MonitoredEndpoint::log_refusal(const std::string& client, Errc e) {
  std::string why = clan::error_message(e);
  // Without an errno it is one of the NIC's tables, not the system, that ran out.
  if (e == Errc::kNoResources && clan::last_errno() == 0)
    why += "; -ORBclanMaxConnections raises the NIC's limits";
  log_refusal(client, why);
}

void MonitoredEndpoint::sweep() {
  std::vector<uint32_t> now;
  {
    std::lock_guard lock(registry_mu_);
    for (const auto& [source, c] : connections_) {
      if (c->dispatchable()) now.push_back(source);
    }
  }
  std::vector<uint32_t> before;
  before.swap(suspects_);
  for (uint32_t s : now) {
    if (std::find(before.begin(), before.end(), s) == before.end()) {
      suspects_.push_back(s);  // its event may be on its way: next time
      continue;
    }
    if (!dispatch(s)) continue;
    ++lost_wakeups_;
    if (omniORB::trace(1)) {
      omniORB::logger l;
      l << scheme_ << ": a readable connection had no readiness event (" << lost_wakeups_
        << " so far on " << address_.c_str() << "); handed over by the monitor's sweep\n";
    }
  }
}

bool MonitoredEndpoint::dispatch(uint32_t source) {
  MonitoredConnection* c = nullptr;
  {
    std::lock_guard lock(registry_mu_);
    auto it = connections_.find(source);
    if (it == connections_.end()) return false;  // gone meanwhile
    c = it->second;
    if (!c->claim_for_dispatch()) return false;
    // Pinned: its destructor waits until the callback returns.
    c->pins().fetch_add(1, std::memory_order_acq_rel);
  }
  dispatching = c;
  notify_(cookie_, c);
  if (dispatching == c) c->pins().fetch_sub(1, std::memory_order_acq_rel);  // still alive
  dispatching = nullptr;
  return true;
}

void MonitoredEndpoint::add_connection(MonitoredConnection* c, uint32_t source) {
  std::lock_guard lock(registry_mu_);
  connections_[source] = c;
}

void MonitoredEndpoint::remove_connection(uint32_t source) {
  MonitoredConnection* c = nullptr;
  {
    std::lock_guard lock(registry_mu_);
    auto it = connections_.find(source);
    if (it == connections_.end()) return;
    c = it->second;
    connections_.erase(it);
  }
  if (dispatching == c) {  // deleted inside its own callback, on this thread
    dispatching = nullptr;
    return;
  }
  // A callback in progress on the monitor thread may still use it.
  while (c->pins().load(std::memory_order_acquire) != 0) std::this_thread::yield();
}

void MonitoredEndpoint::Poke() {
  poked_.store(true, std::memory_order_release);
  signal(poke_source_);
}

void MonitoredEndpoint::Shutdown() {
  stopping_.store(true, std::memory_order_release);
  if (acceptor_.joinable()) acceptor_.join();
  close_listener();
  {
    std::lock_guard lock(pending_mu_);
    pending_.clear();  // their destructors refuse them
  }
  omniORB::logs(20, "clanorb: endpoint shut down.");
  release();
}

}  // namespace clanorb
