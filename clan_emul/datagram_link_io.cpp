// The data path of a DatagramLink: pumping the receive ring (data to the
// caller or the local queue, acks to the credit state, probes answered),
// sending data frames, and receiving.
#include "clan_emul/datagram_link.hpp"

#include <algorithm>
#include <cstring>

#include "clan_emul/counter.hpp"
#include "clan_emul/datagram_link_frame.hpp"
#include "clan_emul/event_queue.hpp"

namespace clan {

using namespace datagram_link_detail;

struct DatagramLink::Direct {
  void* buf;
  size_t size = 0;
  uint64_t sequence = 0;
  bool done = false;
};

void DatagramLink::notify_locked() {
  if (events_) events_->notify(event_source_);
}

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
  switch (h.type) {
    case kData: return process_data(h.value, h.credit, d.data + sizeof h, payload, direct);
    case kAck:
      if (h.credit != 0 || payload != 0) break;
      return process_ack(h.value);
    case kProbe:
      if (h.credit != 0 || payload != 0) break;
      return process_probe(h.value);
    default: break;
  }
  ++malformed_;
}

void DatagramLink::process_data(uint64_t seq, uint32_t credit, const std::byte* payload, size_t len,
                                Direct* direct) {
  const uint64_t window = config_.window;
  // A number below the next expected arrived late: UDP reordered it, and
  // by then it was accounted as lost (a gap or a probe). Reordering is loss
  // (paper 002 sect. 3): discarded, credit and all.
  if (seq < next_expected_) {
    ++reordered_;
    return;
  }
  // Beyond done + W only a dishonest sender goes, and it would overflow our
  // queue: break the link.
  if ((window != 0 && seq - done_locked() >= window) || (window == 0 && credit != 0) ||
      !take_credit_locked(credit)) {
    fail_locked(Errc::kCorrupt);
    return;
  }
  data_lost_ += seq - next_expected_;
  next_expected_ = seq + 1;
  if (direct && queue_.empty()) {
    std::memcpy(direct->buf, payload, len);
    direct->size = len;
    direct->sequence = seq;
    direct->done = true;
    ++data_received_;
    data_bytes_received_ += len;
    consumed_locked();
    return;
  }
  std::vector<std::byte> bytes;
  if (!spare_.empty()) {
    bytes = std::move(spare_.back());
    spare_.pop_back();
  }
  bytes.assign(payload, payload + len);
  queue_.push_back(Queued{seq, std::move(bytes)});
  max_queued_ = std::max<uint64_t>(max_queued_, queue_.size());
  if (!direct) notify_locked();
}

void DatagramLink::process_ack(uint64_t value) {
  if (value > sent_.load(std::memory_order_acquire)) {
    fail_locked(Errc::kCorrupt);  // credit for datagrams never sent
    return;
  }
  ++acks_received_;
  acked_ = std::max(acked_, value);
}

void DatagramLink::process_probe(uint64_t count) {
  const uint64_t window = config_.window;
  if (window != 0 && count > done_locked() + window) {
    fail_locked(Errc::kCorrupt);
    return;
  }
  ++probes_received_;
  // Every data datagram numbered below the count was sent before the probe,
  // so it is in our queue, consumed, or lost.
  if (count > next_expected_) {
    data_lost_ += count - next_expected_;
    next_expected_ = count;
  }
  if (window != 0) queue_ack_locked();
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

}  // namespace clan
