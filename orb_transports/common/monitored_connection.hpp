// The half of a clanorb server connection that omniORB's server core drives:
// setSelectable / clearSelectable / isSelectable / Peek, with the semantics of
// omniORB's own transports (one-shot notifications; now == 2 only re-arms an
// armed connection; data_in_buffer dispatches without waiting; a closed peer
// looks readable). Readiness comes from the transport's receive tripwire,
// directed into the endpoint's event queue only while the connection is
// armed, so a connection a thread is serving posts no events.
//
// A transport derives from this, implements the three readiness hooks, and
// calls detach_from_endpoint() first thing in its destructor (the hooks are
// virtual, so the base cannot call them once the derived part is gone).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include <omniORB4/CORBA.h>
#include <omniORB4/giopEndpoint.h>

#include "clan_emul/deadline.hpp"
#include "orb_transports/common/client_slots.hpp"

namespace clan {
class EventQueue;
}

namespace clanorb {

class MonitoredEndpoint;

class MonitoredConnection : public omni::giopConnection {
 public:
  void setSelectable(int now = 0, CORBA::Boolean data_in_buffer = 0) override;
  void clearSelectable() override;
  CORBA::Boolean isSelectable() override { return endpoint_ != nullptr; }
  CORBA::Boolean Peek() override;

  // Monitor side: true if armed, not being peeked, and readable; the
  // connection is then disarmed and must be handed to omniORB.
  bool claim_for_dispatch();
  // What claim_for_dispatch() would say, changing nothing.
  bool dispatchable() { return dispatchable(flags_.load(std::memory_order_acquire)); }
  std::atomic<int>& pins() { return pins_; }
  // The connection's place among its client's (see ClientSlots), given back
  // when the connection goes.
  void hold(ClientSlots::Slot slot) { client_slot_ = std::move(slot); }

 protected:
  // `endpoint` is null for a client-side connection (never monitored).
  explicit MonitoredConnection(MonitoredEndpoint* endpoint);
  ~MonitoredConnection() override;
  // Must run before the derived destructor tears the transport down.
  void detach_from_endpoint();
  // Wakes the monitor (e.g. after Shutdown, a closed connection is readable).
  void notify_monitor();
  // This connection's event source on its endpoint.
  uint32_t source() const { return source_; }

  // Readiness hooks of the transport.
  virtual bool readable() = 0;
  virtual bool wait_readable(clan::Deadline deadline) = 0;
  // Directs the receive tripwire into `queue` as `source` (nullptr: nowhere).
  virtual void notify_to(clan::EventQueue* queue, uint32_t source) = 0;

 private:
  static constexpr uint32_t kSelectable = 1, kDataInBuffer = 2, kPeeking = 4;
  void arm();
  void disarm();
  // Armed, not being peeked, and with something to read, by flags `f`.
  bool dispatchable(uint32_t f);

  MonitoredEndpoint* endpoint_;
  uint32_t source_ = 0;
  std::atomic<uint32_t> flags_{0};
  // Orders each change of kSelectable with the arm()/disarm() that goes with
  // it: without it, a disarm for a dispatch could land after a worker's
  // concurrent re-arm, leaving a connection selectable but deaf.
  std::mutex arm_mu_;
  // Whether the tripwire is directed at the monitor's queue (under arm_mu_):
  // a disarm of a connection already disarmed (a peek that disarmed before
  // it waited, then claims what came) costs the transport nothing.
  bool armed_ = false;
  std::atomic<int> pins_{0};  // monitor dispatches in progress
  ClientSlots::Slot client_slot_;
};

}  // namespace clanorb
