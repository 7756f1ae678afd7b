#include "orb_transports/common/monitored_connection.hpp"

#include <omniORB4/internal/SocketCollection.h>

#include "clan_emul/event_queue.hpp"
#include "orb_transports/common/monitored_endpoint.hpp"

OMNI_USING_NAMESPACE(omni)

namespace clanorb {

MonitoredConnection::MonitoredConnection(MonitoredEndpoint* endpoint) : endpoint_(endpoint) {
  if (!endpoint_) return;
  endpoint_->acquire();
  auto s = endpoint_->add_source();
  if (s) {
    source_ = s.value();
    endpoint_->add_connection(this, source_);
  } else {
    // omniORB closes connections that are not selectable in thread-pool mode.
    omniORB::logs(1, "clanorb: endpoint event queue full; connection not monitored");
    endpoint_->release();
    endpoint_ = nullptr;
  }
}

void MonitoredConnection::detach_from_endpoint() {
  if (!endpoint_) return;
  {
    std::lock_guard lock(arm_mu_);
    disarm();
  }
  endpoint_->remove_connection(source_);  // waits for a dispatch in progress
  endpoint_->remove_source(source_);
}

MonitoredConnection::~MonitoredConnection() {
  if (endpoint_) endpoint_->release();
}

void MonitoredConnection::notify_monitor() {
  if (endpoint_ && (flags_.load(std::memory_order_acquire) & kSelectable)) {
    endpoint_->signal(source_);
  }
}

void MonitoredConnection::arm() {
  notify_to(&endpoint_->events(), source_);
  armed_ = true;
}
void MonitoredConnection::disarm() {
  if (!armed_) return;
  notify_to(nullptr, 0);
  armed_ = false;
}

void MonitoredConnection::setSelectable(int now, CORBA::Boolean data_in_buffer) {
  if (!endpoint_) return;
  {
    std::lock_guard lock(arm_mu_);
    if (now == 2 && !(flags_.load(std::memory_order_acquire) & kSelectable)) return;
    flags_.fetch_or(kSelectable | (data_in_buffer ? kDataInBuffer : 0), std::memory_order_acq_rel);
    arm();
  }
  // Data that arrived before we armed fired no event: look now.
  if (data_in_buffer || readable()) endpoint_->signal(source_);
}

void MonitoredConnection::clearSelectable() {
  if (!endpoint_) return;
  std::lock_guard lock(arm_mu_);
  flags_.fetch_and(~kSelectable, std::memory_order_acq_rel);
  disarm();
}

bool MonitoredConnection::dispatchable(uint32_t f) {
  if (!(f & kSelectable) || (f & kPeeking)) return false;
  return (f & kDataInBuffer) || readable();
}

bool MonitoredConnection::claim_for_dispatch() {
  uint32_t f = flags_.load(std::memory_order_acquire);
  for (;;) {
    if (!dispatchable(f)) return false;
    if (flags_.compare_exchange_weak(f, f & ~(kSelectable | kDataInBuffer),
                                     std::memory_order_acq_rel)) {
      // One-shot: the worker re-arms after the call; unless it already has.
      std::lock_guard lock(arm_mu_);
      if (!(flags_.load(std::memory_order_acquire) & kSelectable)) disarm();
      return true;
    }
  }
}

CORBA::Boolean MonitoredConnection::Peek() {
  if (!endpoint_) return 0;
  // Take the connection from the monitor for the watch period; the monitor
  // skips a connection being peeked.
  uint32_t f = flags_.load(std::memory_order_acquire);
  do {
    if (!(f & kSelectable) || (f & kPeeking)) return 0;  // someone else has it
  } while (!flags_.compare_exchange_weak(f, f | kPeeking, std::memory_order_acq_rel));
  bool ready = (f & kDataInBuffer) != 0;
  if (!ready) {
    // This thread waits on the connection itself, and the monitor skips a
    // connection being peeked: an event for it would only wake the monitor
    // for nothing, a second wake-up per request on a small host.
    {
      std::lock_guard lock(arm_mu_);
      disarm();
    }
    const omni_time_t& period = SocketCollection::scan_interval;
    ready = wait_readable(clan::Deadline::after(std::chrono::seconds(period.s) +
                                                std::chrono::nanoseconds(period.ns)));
  }
  {
    std::lock_guard lock(arm_mu_);
    if (ready) {
      flags_.fetch_and(~(kSelectable | kDataInBuffer | kPeeking), std::memory_order_acq_rel);
      disarm();
      return 1;
    }
    // Back to the monitor, armed as before, unless omniORB cleared it meanwhile.
    if (flags_.fetch_and(~kPeeking, std::memory_order_acq_rel) & kSelectable) arm();
  }
  // Data may have landed while unarmed or skipped (or another worker set
  // kDataInBuffer meanwhile): let the monitor look again.
  if (dispatchable(flags_.load(std::memory_order_acquire))) endpoint_->signal(source_);
  return 0;
}

}  // namespace clanorb
