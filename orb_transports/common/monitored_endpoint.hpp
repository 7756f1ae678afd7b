// The server endpoint machinery every clanorb transport shares: a listener
// on this process's CLAN node and the monitor of paper 000 sect. 7.3.
// AcceptAndMonitor waits on ONE asynchronous event queue that gathers the
// receive-tripwire events of every armed connection, the arrival of connect
// requests (from a thread blocked on the OOB listener) and Poke(), and hands
// readable connections to omniORB's threads. The endpoint deletes itself
// once Shutdown() was called and its last connection is gone.
//
// A transport derives from it and makes its connections in accept_one().
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include <omniORB4/CORBA.h>
#include <omniORB4/giopEndpoint.h>

#include "clan_emul/event_queue.hpp"
#include "clan_emul/oob_listener.hpp"
#include "orb_transports/common/fabric.hpp"

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

 protected:
  ~MonitoredEndpoint() override;
  // Sets up the transport's connection for an accepted request; null (with
  // the reason logged) if it could not, the request being refused then.
  virtual omni::giopConnection* accept_one(clan::OobRequest& request) = 0;

 private:
  void accept_loop();
  void dispatch(uint32_t source);

  const char* scheme_;
  std::string node_;
  uint16_t port_;
  std::string address_;
  _OMNI_NS(orbServer)::EndpointList addresses_;
  std::shared_ptr<Fabric> fabric_;
  std::unique_ptr<clan::OobListener> listener_;
  clan::EventQueue events_;
  uint32_t poke_source_ = 0, accept_source_ = 0;

  std::thread acceptor_;
  std::mutex pending_mu_;
  std::deque<clan::OobRequest> pending_;

  std::mutex registry_mu_;
  std::unordered_map<uint32_t, MonitoredConnection*> connections_;

  omni::giopConnection::notifyReadable_t notify_ = nullptr;
  void* cookie_ = nullptr;
  std::atomic<bool> poked_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<int> refs_{1};  // the server's, dropped by Shutdown(), + one per connection
};

}  // namespace clanorb
