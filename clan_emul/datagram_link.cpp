#include "clan_emul/datagram_link.hpp"

#include <algorithm>
#include <cstring>

#include "clan_emul/counter.hpp"
#include "clan_emul/event_queue.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/oob_listener.hpp"
#include "clan_emul/oob_manager.hpp"

namespace clan {

namespace {

constexpr uint32_t kData = 0x4c44a7a1;
constexpr uint32_t kAck = 0x4c44ac4b;
constexpr uint32_t kProbe = 0x4c44960b;

struct LinkHeader {
  uint32_t type;
  uint32_t credit;  // kData: low 32 bits of the sender's own `done` (piggybacked ack); else 0
  uint64_t value;
};
static_assert(sizeof(LinkHeader) == DatagramLink::kLinkHeader);

// What each side tells the other: its geometry and window, the ring it
// receives into and the word its sender takes read pointers in.
struct Hello {
  uint32_t magic;
  uint32_t version;
  uint64_t mtu;
  uint64_t ring_bytes;
  uint64_t window;
  RdmaCookie ring;
  RdmaCookie read_pointer;
};
static_assert(sizeof(Hello) == 128);  // the tests forge one of this size
constexpr uint32_t kHelloMagic = 0x444c4e4b;  // "DLNK"
constexpr uint32_t kHelloVersion = 1;

// DMQ bytes one channel frame with `payload` link bytes takes in the ring.
constexpr size_t ring_frame(size_t payload) {
  return dmq::kHeader + dmq::align8(dgram::kFrameHeader + payload);
}

}  // namespace

struct DatagramLink::Direct {
  void* buf;
  size_t size = 0;
  uint64_t sequence = 0;
  bool done = false;
};

size_t DatagramLink::ring_bytes_needed(const Config& c) {
  if (c.window == 0) return 0;
  return c.window * ring_frame(c.mtu) + kControlReserve * ring_frame(kLinkHeader);
}

Result<std::unique_ptr<DatagramLink>> DatagramLink::make(Nic& nic, const Config& config,
                                                         EventQueue* events, uint64_t user) {
  if (!dgram::valid(config) || config.mtu <= kLinkHeader || config.ack_every > config.window ||
      config.probe_after.count() <= 0 || config.probe_max < config.probe_after ||
      ring_bytes_needed(config) > config.ring_bytes) {
    return Errc::kInvalidArgument;
  }
  std::unique_ptr<DatagramLink> l(new DatagramLink(config));
  // Default: an ack every half window. Acks are cumulative, so each restores
  // all the credit consumed so far; acking before the sender has spent its
  // whole window keeps the pipe from draining (and both sides from falling
  // asleep) once per window. ack_every = window is paper 003's "one ack
  // restores the whole window".
  l->ack_every_ = config.ack_every ? config.ack_every : std::max<size_t>(1, config.window / 2);
  auto rx = DatagramReceiver::create(nic, config, events, user);
  if (!rx) return rx.error();
  auto tx = DatagramSender::create(nic, config);
  if (!tx) return tx.error();
  l->rx_ = std::move(rx.value());
  l->tx_ = std::move(tx.value());
  if (events) {
    auto src = events->add_source(user);
    if (!src) return src.error();
    l->own_events_ = l->events_ = events;
    l->own_source_ = l->event_source_ = src.value();
  }
  return l;
}

std::vector<std::byte> DatagramLink::hello() const {
  Hello h{kHelloMagic, kHelloVersion, config_.mtu, config_.ring_bytes, config_.window,
          rx_->cookie(), tx_->cookie()};
  std::vector<std::byte> blob(sizeof h);
  std::memcpy(blob.data(), &h, sizeof h);
  return blob;
}

Errc DatagramLink::attach(const std::vector<std::byte>& peer_hello) {
  Hello h;
  if (peer_hello.size() != sizeof h) return Errc::kCorrupt;
  std::memcpy(&h, peer_hello.data(), sizeof h);
  if (h.magic != kHelloMagic || h.version != kHelloVersion) return Errc::kCorrupt;
  DatagramConfig peer = config_;
  peer.mtu = h.mtu;
  peer.ring_bytes = h.ring_bytes;
  if (!dgram::valid(peer) || h.mtu <= kLinkHeader) return Errc::kCorrupt;
  // Well formed, but not what we can talk to: both ends size their rings alike.
  if (h.mtu != config_.mtu || h.ring_bytes != config_.ring_bytes || h.window != config_.window) {
    return Errc::kInvalidArgument;
  }
  if (Errc e = tx_->attach(h.ring); e != Errc::kOk) return e;
  return rx_->attach(h.read_pointer);
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
  if (own_events_) own_events_->remove_source(own_source_);
}

void DatagramLink::notify_locked() {
  if (events_) events_->notify(event_source_);
}

void DatagramLink::notify_to(EventQueue* queue, uint32_t source) {
  std::lock_guard lk(rx_mu_);
  // rx_ is only reconfigured, not read: its tripwire's target is atomic.
  rx_->notify_to(queue, source);
  events_ = queue;
  event_source_ = source;
}

Errc DatagramLink::fail_locked(Errc e) {
  if (status_ == Errc::kOk) status_ = e;
  return status_;
}

Errc DatagramLink::send_status_locked() const {
  if (status_ != Errc::kOk) return status_;
  return tx_end_;
}

uint64_t DatagramLink::done_locked() const {
  return queue_.empty() ? next_expected_ : queue_.front().sequence;
}

// ---------------------------------------------------------------------------
// Control frames

void DatagramLink::send_control(uint32_t type, uint64_t value) {
  // Under tx_mu_. Never waits for ring space: no room = lost.
  LinkHeader h{type, 0, value};
  const uint64_t spoiled = tx_->spoiled();
  const Errc e = tx_->send(&h, sizeof h, Deadline::already_expired());
  const bool lost = e != Errc::kOk || tx_->spoiled() != spoiled;
  if (type == kAck) {
    acks_sent_.fetch_add(1, std::memory_order_relaxed);
    if (lost) acks_lost_.fetch_add(1, std::memory_order_relaxed);
  } else {
    probes_sent_.fetch_add(1, std::memory_order_relaxed);
    if (lost) probes_lost_.fetch_add(1, std::memory_order_relaxed);
  }
}

// Sends the pending ack if tx_mu_ is free; otherwise its holder sends it when
// it lets go (it calls this after unlocking, and the pending value is set
// before our try_lock, so one of the two sees it).
void DatagramLink::flush_control() {
  while (pending_ack_.load(std::memory_order_seq_cst) != 0 && tx_mu_.try_lock()) {
    const uint64_t v = pending_ack_.exchange(0, std::memory_order_seq_cst);
    if (v != 0) send_control(kAck, v - 1);
    tx_mu_.unlock();
  }
}

void DatagramLink::queue_ack_locked() {
  last_ack_ = done_locked();
  pending_ack_.store(last_ack_ + 1, std::memory_order_seq_cst);
  flush_control();
}

bool DatagramLink::take_credit_locked(uint32_t credit) {
  // Credit counts only grow, but a piggybacked value may arrive after a newer
  // standalone ack (the two are sent under different locks): a value at or
  // below what we hold says nothing. The window keeps honest values within
  // 2^31 of acked_, so the low 32 bits say which count is meant.
  const auto ahead = static_cast<int32_t>(credit - static_cast<uint32_t>(acked_));
  if (ahead <= 0) return true;
  const uint64_t value = acked_ + static_cast<uint64_t>(ahead);
  if (value > sent_.load(std::memory_order_acquire)) return false;  // credit for datagrams never sent
  acked_ = value;
  ++credit_piggybacked_;
  return true;
}

void DatagramLink::consumed_locked() {
  if (config_.window != 0 && done_locked() - last_ack_ >= ack_every_) queue_ack_locked();
}

// ---------------------------------------------------------------------------
// Pumping the receive ring

void DatagramLink::pump(std::unique_lock<std::mutex>& lk, Deadline deadline, Direct* direct) {
  pumping_ = true;
  lk.unlock();
  auto d = rx_->receive(deadline);
  lk.lock();
  if (!d) {
    const Errc e = d.error();
    if (e == Errc::kClosed) {
      // The peer closed (and we drained it): the connection is over both ways.
      rx_end_ = Errc::kClosed;
      if (tx_end_ == Errc::kOk) tx_end_ = Errc::kClosed;
    } else if (e != Errc::kTimeout) {
      fail_locked(e);
    }
  } else {
    process(d.value(), direct);
    if (Errc e = rx_->release(); e != Errc::kOk) fail_locked(e);
  }
  rx_stats_ = rx_->stats();
  pumping_ = false;
  cv_.notify_all();
}

void DatagramLink::process(const Datagram& d, Direct* direct) {
  LinkHeader h;
  if (d.size < sizeof h) {
    ++malformed_;
    return;
  }
  std::memcpy(&h, d.data, sizeof h);  // read once: the peer could rewrite the ring
  const size_t payload = d.size - sizeof h;
  const uint64_t window = config_.window;
  switch (h.type) {
    case kData: {
      const uint64_t seq = h.value;
      // Order is kept by the channel; beyond done + W only a dishonest
      // sender goes, and it would overflow our queue: break the link.
      if (seq < next_expected_ || (window != 0 && seq - done_locked() >= window) ||
          (window == 0 && h.credit != 0) || !take_credit_locked(h.credit)) {
        fail_locked(Errc::kCorrupt);
        return;
      }
      data_lost_ += seq - next_expected_;
      next_expected_ = seq + 1;
      if (direct && queue_.empty()) {
        std::memcpy(direct->buf, d.data + sizeof h, payload);
        direct->size = payload;
        direct->sequence = seq;
        direct->done = true;
        ++data_received_;
        data_bytes_received_ += payload;
        consumed_locked();
        return;
      }
      std::vector<std::byte> bytes;
      if (!spare_.empty()) {
        bytes = std::move(spare_.back());
        spare_.pop_back();
      }
      bytes.assign(d.data + sizeof h, d.data + d.size);
      queue_.push_back(Queued{seq, std::move(bytes)});
      max_queued_ = std::max<uint64_t>(max_queued_, queue_.size());
      if (!direct) notify_locked();
      return;
    }
    case kAck: {
      if (h.credit != 0 || payload != 0) break;
      if (h.value > sent_.load(std::memory_order_acquire)) {
        fail_locked(Errc::kCorrupt);  // credit for datagrams never sent
        return;
      }
      ++acks_received_;
      acked_ = std::max(acked_, h.value);
      return;
    }
    case kProbe: {
      if (h.credit != 0 || payload != 0) break;
      const uint64_t p = h.value;
      if (window != 0 && p > done_locked() + window) {
        fail_locked(Errc::kCorrupt);
        return;
      }
      ++probes_received_;
      // Every data datagram numbered below p was sent before the probe, so
      // it is in our queue, consumed, or lost.
      if (p > next_expected_) {
        data_lost_ += p - next_expected_;
        next_expected_ = p;
      }
      if (window != 0) queue_ack_locked();
      return;
    }
    default: break;
  }
  ++malformed_;
}

// ---------------------------------------------------------------------------
// Sending

Errc DatagramLink::wait_credit(std::unique_lock<std::mutex>& lk, uint64_t need_acked,
                               Deadline deadline) {
  if (Errc e = send_status_locked(); e != Errc::kOk) return e;
  if (acked_ >= need_acked) return Errc::kOk;
  credit_stalls_.fetch_add(1, std::memory_order_relaxed);
  auto interval = std::chrono::duration_cast<Clock::duration>(config_.probe_after);
  const auto probe_max = std::chrono::duration_cast<Clock::duration>(config_.probe_max);
  Clock::time_point next_probe = Clock::now() + interval;
  uint64_t seen_acked = acked_;
  bool pumped_once = false;
  for (;;) {
    if (Errc e = send_status_locked(); e != Errc::kOk) return e;
    if (acked_ >= need_acked) return Errc::kOk;
    if (acked_ != seen_acked) {  // progress: start the probe clock again
      seen_acked = acked_;
      interval = std::chrono::duration_cast<Clock::duration>(config_.probe_after);
      next_probe = Clock::now() + interval;
    }
    if (deadline.expired()) {
      // Even a caller that cannot wait gets the credit already in the ring.
      if (pumped_once || pumping_) return Errc::kTimeout;
      pumped_once = true;
      pump(lk, Deadline::now(), nullptr);
      continue;
    }
    const Clock::time_point now = Clock::now();
    if (now >= next_probe) {
      const uint64_t value = sent_.load(std::memory_order_relaxed);
      lk.unlock();
      {
        std::lock_guard tl(tx_mu_);
        send_control(kProbe, value);
      }
      flush_control();
      lk.lock();
      interval = std::min(interval * 2, probe_max);
      next_probe = Clock::now() + interval;
      continue;
    }
    const Deadline until(std::min(deadline.when(), next_probe));
    if (!pumping_) {
      pump(lk, until, nullptr);
    } else {
      cv_.wait_until(lk, until.when());
    }
  }
}

Errc DatagramLink::send(const void* data, size_t len, Deadline deadline) {
  if (len > mtu() || (data == nullptr && len != 0)) return Errc::kInvalidArgument;
  std::lock_guard sl(send_mu_);
  const uint64_t seq = sent_.load(std::memory_order_relaxed);
  uint32_t credit = 0;
  {
    std::unique_lock lk(rx_mu_);
    const uint64_t w = config_.window;
    Errc e = w != 0 && seq >= w ? wait_credit(lk, seq - w + 1, deadline) : send_status_locked();
    if (e != Errc::kOk) return e;
    if (w != 0) {
      // Every data frame carries our credit for the peer: in request-reply
      // traffic it goes with the next request or reply, and the standalone
      // ack, a frame of its own that wakes whoever watches the peer's ring,
      // is due only when nothing flows back.
      const uint64_t done = done_locked();
      credit = static_cast<uint32_t>(done);
      if (done != last_ack_) ++credit_piggybacks_sent_;  // under rx_mu_: no locked increment
      last_ack_ = done;
    }
  }
  std::unique_lock tl(tx_mu_);
  const LinkHeader h{kData, credit, seq};
  // Issued before it can land: the peer may ack it before send() returns.
  sent_.store(seq + 1, std::memory_order_release);
  Errc e = tx_->send(&h, sizeof h, data, len, Deadline::already_expired());
  if (e == Errc::kTimeout) {
    ring_full_stalls_.fetch_add(1, std::memory_order_relaxed);
    e = tx_->send(&h, sizeof h, data, len, deadline);
  }
  tl.unlock();
  flush_control();
  if (e != Errc::kOk) {
    sent_.store(seq, std::memory_order_release);  // not sent: the number is reused
    return e;
  }
  bump(data_bytes_sent_, len);  // under send_mu_: one writer
  return Errc::kOk;
}

Errc DatagramLink::flush(Deadline deadline) {
  if (config_.window == 0) return Errc::kOk;
  std::lock_guard sl(send_mu_);
  std::unique_lock lk(rx_mu_);
  return wait_credit(lk, sent_.load(std::memory_order_relaxed), deadline);
}

// ---------------------------------------------------------------------------
// Receiving

Result<size_t> DatagramLink::try_receive(void* buf, size_t cap) {
  if (buf == nullptr || cap < mtu()) return Errc::kInvalidArgument;
  std::unique_lock rl(recv_mu_, std::try_to_lock);
  if (!rl.owns_lock()) return Errc::kWouldBlock;
  return receive_locked(buf, Deadline::now(), nullptr);
}

Result<size_t> DatagramLink::receive(void* buf, size_t cap, Deadline deadline,
                                     uint64_t* sequence) {
  if (buf == nullptr || cap < mtu()) return Errc::kInvalidArgument;
  std::lock_guard rl(recv_mu_);
  return receive_locked(buf, deadline, sequence);
}

Result<size_t> DatagramLink::receive_locked(void* buf, Deadline deadline, uint64_t* sequence) {
  std::unique_lock lk(rx_mu_);
  bool pumped = false;
  for (;;) {
    if (status_ != Errc::kOk) return status_;
    if (!queue_.empty()) {
      Queued q = std::move(queue_.front());
      queue_.pop_front();
      const size_t n = q.bytes.size();
      if (n) std::memcpy(buf, q.bytes.data(), n);
      if (sequence) *sequence = q.sequence;
      spare_.push_back(std::move(q.bytes));
      ++data_received_;
      data_bytes_received_ += n;
      consumed_locked();
      return n;
    }
    if (rx_end_ != Errc::kOk) return rx_end_;
    if (!pumping_) {
      if (pumped && deadline.expired()) return Errc::kTimeout;
      Direct direct{buf};
      pump(lk, deadline, &direct);
      pumped = true;
      if (direct.done) {
        if (sequence) *sequence = direct.sequence;
        return direct.size;
      }
      continue;
    }
    if (deadline.expired()) return Errc::kTimeout;
    if (deadline.is_never()) {
      cv_.wait(lk);
    } else {
      cv_.wait_until(lk, deadline.when());
    }
  }
}

bool DatagramLink::readable() const {
  // The object is never const itself (it lives behind a unique_ptr):
  // servicing the ring here is what makes readable() exact.
  return const_cast<DatagramLink*>(this)->poll_readable();
}

bool DatagramLink::unread() const {
  std::lock_guard lk(rx_mu_);
  return !queue_.empty() || rx_->readable();
}

bool DatagramLink::poll_readable() {
  std::unique_lock lk(rx_mu_);
  for (;;) {
    if (status_ != Errc::kOk || !queue_.empty() || rx_end_ != Errc::kOk) return true;
    // Another thread is reading the ring: it queues what it finds (and
    // posts to the event queue, if any).
    if (pumping_) return false;
    if (!rx_->readable()) return false;
    const uint64_t frames = rx_stats_.frames;
    pump(lk, Deadline::now(), nullptr);
    if (rx_stats_.frames == frames && queue_.empty() && status_ == Errc::kOk &&
        rx_end_ == Errc::kOk) {
      return false;  // nothing taken after all
    }
  }
}

// ---------------------------------------------------------------------------

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
  s.max_queued = max_queued_;
  return s;
}

}  // namespace clan
