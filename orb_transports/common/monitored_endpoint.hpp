// The server endpoint machinery every clanorb transport shares: a listener
// on this process's CLAN node and the monitor of paper 000 sect. 7.3.
// AcceptAndMonitor waits on ONE asynchronous event queue that gathers the
// receive-tripwire events of every armed connection, the arrival of connect
// requests (from a thread blocked on the OOB listener) and Poke(), and hands
// readable connections to omniORB's threads. The endpoint deletes itself
// once Shutdown() was called and its last connection is gone.
//
// A transport derives from it and makes its connections in accept_one().
// A transport with its own connection manager and completion mechanism
// (giop:via) overrides the listener and event hooks instead.
//
// Refused connect requests are logged at omniORB's default trace level, at
// most one line a second with a count of those not logged; a client (a peer
// node) with -ORBclanMaxConnectionsPerClient connections to the endpoint
// already is refused before its request is looked at.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <omniORB4/CORBA.h>
#include <omniORB4/giopEndpoint.h>

#include "clan_emul/event_queue.hpp"
#include "clan_emul/oob_listener.hpp"
#include "orb_transports/common/client_slots.hpp"
#include "orb_transports/common/fabric.hpp"
#include "orb_transports/common/log_limiter.hpp"

namespace clanorb {

class MonitoredConnection;

class MonitoredEndpoint : public omni::giopEndpoint {
 public:
  // `scheme` is a string literal like "giop:clan"; node "" = this process's.
  MonitoredEndpoint(const char* scheme, std::string node, uint16_t port);

  const char* type() const override { return scheme_; }
  const char* address() const override { return address_.c_str(); }
  const _OMNI_NS(orbServer)::EndpointList* addresses() const override { return &addresses_; }
  CORBA::Boolean publish(const _OMNI_NS(orbServer)::PublishSpecs& specs, CORBA::Boolean all_specs,
                         CORBA::Boolean all_eps,
                         _OMNI_NS(orbServer)::EndpointList& published) override;
  CORBA::Boolean Bind() override;
  omni::giopConnection* AcceptAndMonitor(omni::giopConnection::notifyReadable_t func,
                                         void* cookie) override;
  void Poke() override;
  void Shutdown() override;

  // For connections of this endpoint.
  clan::EventQueue& events() { return events_; }
  const std::shared_ptr<Fabric>& fabric() const { return fabric_; }
  void add_connection(MonitoredConnection* c, uint32_t source);
  void remove_connection(uint32_t source);
  void acquire() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release();

  // Event hooks. The defaults use the endpoint's event queue on the process
  // fabric's NIC, into which armed connections direct their tripwires.
  // A new event source for a connection (kNoResources if none is left).
  virtual clan::Result<uint32_t> add_source();
  virtual void remove_source(uint32_t source) { events_.remove_source(source); }
  // Makes AcceptAndMonitor look at `source` (never blocks).
  virtual void signal(uint32_t source) { events_.notify(source); }

 protected:
  // A connect request: the client that sent it (its node name) and what
  // makes its connection (null: refused, the reason logged). Dropping it
  // unused refuses the request. Empty: no request.
  struct Acceptor {
    std::string client;
    std::function<omni::giopConnection*()> accept;
    explicit operator bool() const { return static_cast<bool>(accept); }
  };

  ~MonitoredEndpoint() override;
  // Sets up the transport's connection for an accepted OOB request; null
  // (with the reason logged) if it could not, the request being refused then.
  // Used by the default listener hooks.
  virtual omni::giopConnection* accept_one(clan::OobRequest&) { return nullptr; }

  // Listener hooks. The defaults listen on the process fabric's OOB manager.
  // Starts listening on node_:port_ (port 0: the first free one), setting
  // port_; returns the node name used, or "" (the reason logged).
  virtual std::string open_listener();
  // Waits until `deadline` for a connect request: how to accept it, an empty
  // Acceptor on timeout, nullopt if the listener has stopped for good.
  virtual std::optional<Acceptor> next_request(clan::Deadline deadline);
  virtual void close_listener() { listener_.reset(); }
  // Sets up the event sources of the endpoint itself; false if it cannot.
  virtual bool open_events();
  // Blocks until a source may need looking at, or until `deadline`;
  // nullopt: look at nothing.
  virtual std::optional<uint32_t> next_event(clan::Deadline deadline);

  // Logs that a connection from `client` was refused and why, rate-limited.
  void log_refusal(const std::string& client, const std::string& why);
  // The same for a fabric failure `e`, in the fabric's words, naming the
  // option that raises the NIC's limits when one ran out.
  void log_refusal(const std::string& client, clan::Errc e);

  std::string node_;
  uint16_t port_;

 private:
  void accept_loop();
  // Accepts `request` if its client is within its cap: the connection, or
  // null (refused).
  omni::giopConnection* admit(Acceptor& request);
  // Hands the connection of `source` to omniORB if it is armed and readable;
  // true if it did.
  bool dispatch(uint32_t source);
  // Looks at every connection: the safety net for a readiness event that
  // never came. A connection found dispatchable by two sweeps in a row is
  // handed over (and logged as a lost wake-up); once is not enough, as its
  // event may be on its way.
  void sweep();

  const char* scheme_;
  std::string address_;
  _OMNI_NS(orbServer)::EndpointList addresses_;
  std::shared_ptr<Fabric> fabric_;
  std::unique_ptr<clan::OobListener> listener_;
  clan::EventQueue events_;
  uint32_t poke_source_ = 0, accept_source_ = 0;

  std::thread acceptor_;
  std::mutex pending_mu_;
  std::deque<Acceptor> pending_;
  std::shared_ptr<ClientSlots> clients_;  // made by Bind(), from the options
  LogLimiter refusals_{std::chrono::seconds(1)};

  std::mutex registry_mu_;
  std::unordered_map<uint32_t, MonitoredConnection*> connections_;

  omni::giopConnection::notifyReadable_t notify_ = nullptr;
  void* cookie_ = nullptr;
  std::atomic<bool> poked_{false};
  uint64_t lost_wakeups_ = 0;  // connections only the sweep found readable
  clan::Clock::time_point next_sweep_{};
  std::vector<uint32_t> suspects_;  // dispatchable at the last sweep
  std::atomic<bool> stopping_{false};
  std::atomic<int> refs_{1};  // the server's, dropped by Shutdown(), + one per connection
};

}  // namespace clanorb
