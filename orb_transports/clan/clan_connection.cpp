#include "orb_transports/clan/clan_connection.hpp"

#include <cstring>
#include <thread>

#include <omniORB4/internal/SocketCollection.h>

#include "orb_transports/clan/clan_endpoint.hpp"
#include "orb_transports/common/omni_time.hpp"

OMNI_USING_NAMESPACE(omni)

namespace clanorb {

using clan::Errc;

ClanConnection::ClanConnection(std::shared_ptr<Fabric> fabric,
                               std::unique_ptr<clan::DmqConnection> dmq, std::string my_address,
                               std::string peer_address, ClanEndpoint* endpoint)
    : fabric_(std::move(fabric)),
      dmq_(std::move(dmq)),
      my_address_(std::move(my_address)),
      peer_address_(std::move(peer_address)),
      endpoint_(endpoint),
      dma_threshold_(fabric_options().dma_threshold) {
  if (endpoint_) {
    endpoint_->acquire();
    auto s = endpoint_->events().add_source(0);
    if (s) {
      source_ = s.value();
      endpoint_->add_connection(this, source_);
    } else {
      // No event source left: the connection cannot be monitored. omniORB
      // closes connections that are not selectable in thread-pool mode.
      omniORB::logs(1, "giop:clan: endpoint event queue full; connection not monitored");
      endpoint_->release();
      endpoint_ = nullptr;
    }
  }
}

ClanConnection::~ClanConnection() {
  if (endpoint_) {
    disarm();
    endpoint_->remove_connection(source_);  // waits for a dispatch in progress
    endpoint_->events().remove_source(source_);
    ClanEndpoint* e = endpoint_;
    dmq_.reset();
    e->release();
  }
}

int ClanConnection::Send(void* buf, size_t sz, const omni_time_t& deadline) {
  if (sz == 0) return 0;
  clan::DmqSender& tx = dmq_->tx();
  const size_t n = sz < tx.config().max_message ? sz : tx.config().max_message;
  const clan::Transfer how = dma_threshold_ != 0 && n >= dma_threshold_ ? clan::Transfer::kDma
                                                                        : clan::Transfer::kPio;
  Errc e = tx.send(buf, n, to_deadline(deadline), how);
  if (e == Errc::kOk) return static_cast<int>(n);
  return e == Errc::kTimeout ? 0 : -1;
}

int ClanConnection::Recv(void* buf, size_t sz, const omni_time_t& deadline) {
  clan::DmqReceiver& rx = dmq_->rx();
  auto* out = static_cast<std::byte*>(buf);
  size_t got = 0;
  while (got < sz) {
    if (rx_left_ == 0) {
      // Block only for the first chunk; then take what is already there.
      if (got != 0 && !rx.readable()) break;
      auto m = rx.receive(got == 0 ? to_deadline(deadline) : clan::Deadline::now());
      if (!m) {
        if (got != 0) break;  // the error shows on the next call
        return m.error() == Errc::kTimeout ? 0 : -1;
      }
      rx_ptr_ = m->data;
      rx_left_ = m->size;
      if (rx_left_ == 0) {
        rx.release();
        continue;
      }
    }
    const size_t n = sz - got < rx_left_ ? sz - got : rx_left_;
    std::memcpy(out + got, rx_ptr_, n);
    got += n;
    rx_ptr_ += n;
    rx_left_ -= n;
    if (rx_left_ == 0 && rx.release() != Errc::kOk && got == 0) return -1;
  }
  return static_cast<int>(got);
}

void ClanConnection::Shutdown() {
  // Wake our own blocked Send/Recv with an error, and tell the peer through
  // the connection manager (non-blocking): it drains what we sent, then sees
  // the close. Nothing is written to shared memory here, so a Send running
  // in another thread cannot race with us.
  dmq_->tx().abort(Errc::kClosed);
  dmq_->rx().abort(Errc::kClosed);
  dmq_->oob().disconnect();
  if (endpoint_ && (flags_.load(std::memory_order_acquire) & kSelectable)) {
    endpoint_->events().notify(source_);  // a closed connection looks readable
  }
}

void ClanConnection::arm() {
  dmq_->rx().notify_to(&endpoint_->events(), source_);
}

void ClanConnection::disarm() { dmq_->rx().notify_to(nullptr, 0); }

void ClanConnection::setSelectable(int now, CORBA::Boolean data_in_buffer) {
  if (!endpoint_) return;
  uint32_t f = flags_.load(std::memory_order_acquire);
  if (now == 2 && !(f & kSelectable)) return;
  flags_.fetch_or(kSelectable | (data_in_buffer ? kDataInBuffer : 0), std::memory_order_acq_rel);
  arm();
  // Data that arrived before we armed fired no event: look now.
  if (data_in_buffer || readable()) endpoint_->events().notify(source_);
}

void ClanConnection::clearSelectable() {
  if (!endpoint_) return;
  flags_.fetch_and(~uint32_t{kSelectable}, std::memory_order_acq_rel);
  disarm();
}

bool ClanConnection::claim_for_dispatch() {
  uint32_t f = flags_.load(std::memory_order_acquire);
  for (;;) {
    if (!(f & kSelectable) || (f & kPeeking)) return false;
    if (!(f & kDataInBuffer) && !readable()) return false;
    if (flags_.compare_exchange_weak(f, f & ~uint32_t{kSelectable | kDataInBuffer},
                                     std::memory_order_acq_rel)) {
      disarm();  // one-shot: the worker re-arms after the call
      return true;
    }
  }
}

CORBA::Boolean ClanConnection::Peek() {
  if (!endpoint_) return 0;
  // Take the connection from the monitor for the watch period.
  uint32_t f = flags_.load(std::memory_order_acquire);
  do {
    if (!(f & kSelectable) || (f & kPeeking)) return 0;  // someone else has it
  } while (!flags_.compare_exchange_weak(f, f | kPeeking, std::memory_order_acq_rel));
  if (f & kDataInBuffer) {
    flags_.fetch_and(~uint32_t{kSelectable | kDataInBuffer | kPeeking}, std::memory_order_acq_rel);
    disarm();
    return 1;
  }
  const omni_time_t& period = SocketCollection::scan_interval;
  const auto watch = std::chrono::seconds(period.s) + std::chrono::nanoseconds(period.ns);
  bool ready = dmq_->rx().wait_readable(clan::Deadline::after(watch));
  // Keep it only if the monitor did not take it meanwhile (it skips us while
  // kPeeking is set, so it did not).
  f = flags_.load(std::memory_order_acquire);
  if (ready) {
    flags_.fetch_and(~uint32_t{kSelectable | kDataInBuffer | kPeeking}, std::memory_order_acq_rel);
    disarm();
    return 1;
  }
  flags_.fetch_and(~uint32_t{kPeeking}, std::memory_order_acq_rel);
  // Data may have landed while the monitor skipped us: let it look again.
  if (readable()) endpoint_->events().notify(source_);
  return 0;
}

}  // namespace clanorb
