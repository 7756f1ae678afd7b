#include "clan_emul/datagram_link.hpp"

#include <algorithm>
#include <cstring>

#include "clan_emul/event_queue.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/oob_listener.hpp"
#include "clan_emul/oob_manager.hpp"
#include "clan_emul/wire/udp_channel.hpp"

namespace clan {

Result<std::unique_ptr<DatagramLink>> DatagramLink::make(Nic& nic, const Config& config,
                                                         EventQueue* events, uint64_t user) {
  if (Errc e = check_config(config); e != Errc::kOk) return e;
  std::unique_ptr<DatagramLink> l(new DatagramLink(config));
  // Default: an ack every half window. Acks are cumulative, so each restores
  // all the credit consumed so far; acking before the sender has spent its
  // whole window keeps the pipe from draining (and both sides from falling
  // asleep) once per window. ack_every = window is paper 003's "one ack
  // restores the whole window".
  l->ack_every_ = config.ack_every ? config.ack_every : std::max<size_t>(1, config.window / 2);
  const Errc e = config.channel == DatagramChannel::kUdp ? l->open_udp(nic)
                                                        : l->open_shared_memory(nic, events, user);
  if (e != Errc::kOk) return e;
  if (events) {
    auto src = events->add_source(user);
    if (!src) return src.error();
    l->own_events_ = l->events_ = events;
    l->own_source_ = l->event_source_ = src.value();
    // Over udp arrivals are posted by the channel's notifier, as the ring's
    // tripwire posts them over shared memory.
    if (l->udp_) {
      if (Errc n = l->rx_->notify_to(events, l->own_source_); n != Errc::kOk) return n;
    }
  }
  return l;
}

void DatagramLink::watch() {
  // Runs on the connection manager's thread: short, no waiting (rx_mu_ is
  // never held across a wait).
  oob_->set_on_down([this](OobState s) {
    if (s == OobState::kPeerDead) {
      tx_->abort(Errc::kPeerDead);
      rx_->abort(Errc::kPeerDead);
    } else {
      tx_->abort(Errc::kClosed);
      rx_->peer_closed();  // everything it sent is already in our ring
    }
    {
      std::lock_guard lk(rx_mu_);
      if (s == OobState::kPeerDead) fail_locked(Errc::kPeerDead);
      if (tx_end_ == Errc::kOk) tx_end_ = Errc::kClosed;
      notify_locked();
    }
    cv_.notify_all();
  });
}

Result<std::unique_ptr<DatagramLink>> DatagramLink::connect(Nic& nic, OobManager& oob,
                                                            const std::string& node, uint16_t port,
                                                            const Config& config,
                                                            Deadline deadline, EventQueue* events,
                                                            uint64_t user) {
  auto l = make(nic, config, events, user);
  if (!l) return l.error();
  auto conn = oob.connect(node, port, (*l)->hello(), deadline);
  if (!conn) return conn.error();
  (*l)->oob_ = std::move(conn.value());
  if (Errc e = (*l)->attach((*l)->oob_->peer_blob()); e != Errc::kOk) {
    (*l)->oob_->disconnect();
    return e;
  }
  (*l)->watch();
  return l;
}

Result<std::unique_ptr<DatagramLink>> DatagramLink::accept(Nic& nic, OobRequest& request,
                                                           const Config& config,
                                                           EventQueue* events, uint64_t user) {
  auto l = make(nic, config, events, user);
  if (!l) {
    request.reject();
    return l.error();
  }
  if (Errc e = (*l)->attach(request.peer_blob()); e != Errc::kOk) {
    request.reject();
    return e;
  }
  auto conn = request.accept((*l)->hello());
  if (!conn) return conn.error();
  (*l)->oob_ = std::move(conn.value());
  (*l)->watch();
  return l;
}

DatagramLink::~DatagramLink() {
  // The OOB connection first: its destructor disconnects and waits for a
  // down-callback in progress, which uses everything below.
  oob_.reset();
  // Over udp the notifier thread posts to the queue: stopped before the
  // source goes.
  if (udp_) udp_->notify_to(nullptr, 0);
  if (own_events_) own_events_->remove_source(own_source_);
}

void DatagramLink::notify_to(EventQueue* queue, uint32_t source) {
  std::lock_guard lk(rx_mu_);
  // rx_ is only reconfigured, not read: its tripwire's target is atomic,
  // the udp notifier's is under its own lock. A udp notifier that cannot
  // start (no thread, no descriptor) breaks the link: its owner would wait
  // for events that never come.
  if (rx_->notify_to(queue, source) != Errc::kOk) fail_locked(Errc::kNoResources);
  events_ = queue;
  event_source_ = source;
}

Errc DatagramLink::close() {
  Errc e;
  {
    std::lock_guard tl(tx_mu_);
    e = tx_->close();
  }
  {
    std::lock_guard lk(rx_mu_);
    if (tx_end_ == Errc::kOk) tx_end_ = Errc::kClosed;
  }
  cv_.notify_all();
  if (oob_) oob_->disconnect();
  return e;
}

DatagramLinkStats DatagramLink::stats() const {
  Stats s;
  s.sender = tx_->stats();
  s.credit_stalls = credit_stalls_.load(std::memory_order_relaxed);
  s.credit_acks_sent = acks_sent_.load(std::memory_order_relaxed);
  s.credit_acks_lost = acks_lost_.load(std::memory_order_relaxed);
  s.probes_sent = probes_sent_.load(std::memory_order_relaxed);
  s.probes_lost = probes_lost_.load(std::memory_order_relaxed);
  s.ring_full_stalls = ring_full_stalls_.load(std::memory_order_relaxed);
  s.data_sent = sent_.load(std::memory_order_relaxed);
  s.data_bytes_sent = data_bytes_sent_.load(std::memory_order_relaxed);
  std::lock_guard lk(rx_mu_);
  s.receiver = rx_stats_;
  s.data_received = data_received_;
  s.data_bytes_received = data_bytes_received_;
  s.data_lost = data_lost_;
  s.credit_acks_received = acks_received_;
  s.credit_piggybacked_received = credit_piggybacked_;
  s.credit_piggybacked_sent = credit_piggybacks_sent_;
  s.probes_received = probes_received_;
  s.malformed = malformed_;
  s.reordered = reordered_;
  s.max_queued = max_queued_;
  return s;
}

}  // namespace clan
