#include "clan_emul/datagram_sender.hpp"

#include "clan_emul/counter.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/wire/udp_channel.hpp"

namespace clan {

using namespace dgram;

namespace {

// Condition-variable wait bounded by a Deadline (never -> unbounded wait).
template <class Pred>
bool wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, Deadline deadline,
                Pred pred) {
  if (deadline.is_never()) {
    cv.wait(lock, pred);
    return true;
  }
  return cv.wait_until(lock, deadline.when(), pred);
}

}  // namespace

Result<std::unique_ptr<DatagramSender>> DatagramSender::create(Nic& nic,
                                                               const DatagramConfig& config,
                                                               const Endpoint* endpoint) {
  if (!valid(config)) return Errc::kInvalidArgument;
  std::unique_ptr<DatagramSender> s(new DatagramSender(config));
  auto dmq = DmqSender::create(nic, dmq_config(config), endpoint);
  if (!dmq) return dmq.error();
  s->dmq_ = std::move(dmq.value());
  s->start();
  return s;
}

Result<std::unique_ptr<DatagramSender>> DatagramSender::create(
    std::shared_ptr<wire::UdpChannel> channel, const DatagramConfig& config) {
  if (!channel || !valid(config) || kFrameHeader + config.mtu > channel->max_frame()) {
    return Errc::kInvalidArgument;
  }
  std::unique_ptr<DatagramSender> s(new DatagramSender(config));
  s->udp_ = std::move(channel);
  s->start();
  return s;
}

void DatagramSender::start() {
  if (config_.faults.delay.count() > 0) {
    link_ = std::thread([this] { link_loop(); });
  } else {
    scratch_.resize(kFrameHeader + config_.mtu);
  }
}

Errc DatagramSender::channel_status() const {
  return udp_ ? udp_->send_status() : dmq_->status();
}

void DatagramSender::channel_abort(Errc reason) {
  if (udp_) {
    udp_->abort_send(reason);
  } else {
    dmq_->abort(reason);
  }
}

DatagramSender::~DatagramSender() { stop_link(); }

void DatagramSender::stop_link() {
  if (!link_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  link_cv_.notify_all();
  channel_abort(Errc::kClosed);  // wakes the link thread if it waits for ring space
  link_.join();
}

Errc DatagramSender::fail_locked(Errc e) {
  if (status_.load(std::memory_order_relaxed) == Errc::kOk) status_.store(e, std::memory_order_release);
  return status_.load(std::memory_order_relaxed);
}

Errc DatagramSender::status() const { return status_.load(std::memory_order_acquire); }

void DatagramSender::abort(Errc reason) {
  {
    std::lock_guard lock(mu_);
    fail_locked(reason);
    stop_ = true;
  }
  link_cv_.notify_all();
  owner_cv_.notify_all();
  channel_abort(reason);
}

DatagramSenderStats DatagramSender::stats() const {
  DatagramSenderStats s;
  s.sent = sent_.load(std::memory_order_relaxed);
  s.dropped = dropped_.load(std::memory_order_relaxed);
  s.corrupted = corrupted_.load(std::memory_order_relaxed);
  s.delivered = delivered_.load(std::memory_order_relaxed);
  s.bytes = bytes_.load(std::memory_order_relaxed);
  std::lock_guard lock(mu_);
  s.held = held_.size() + (in_flight_ ? 1 : 0);
  return s;
}

uint64_t DatagramSender::spoiled() const {
  return dropped_.load(std::memory_order_relaxed) + corrupted_.load(std::memory_order_relaxed);
}

Errc DatagramSender::send(const void* data, size_t len, Deadline deadline, Transfer how) {
  return send(nullptr, 0, data, len, deadline, how);
}

Errc DatagramSender::send(const void* head, size_t head_len, const void* data, size_t len,
                          Deadline deadline, Transfer how) {
  if (len > config_.mtu || head_len > config_.mtu - len || (data == nullptr && len != 0) ||
      (head == nullptr && head_len != 0)) {
    return Errc::kInvalidArgument;
  }
  if (Errc st = status(); st != Errc::kOk) return st;
  return link_.joinable() ? send_delayed(head, head_len, data, len, deadline, how)
                          : send_now(head, head_len, data, len, deadline, how);
}

Errc DatagramSender::send_now(const void* head, size_t head_len, const void* data, size_t len,
                              Deadline deadline, Transfer how) {
  const FaultDecision d = pending_decision_ ? *pending_decision_ : faults_.next();
  pending_decision_.reset();
  const size_t frame_len = kFrameHeader + head_len + len;
  if (d.action != FaultAction::kDrop) {
    encode_frame(scratch_.data(), next_sequence_, head, head_len, data, len);
    FaultInjector::apply(d, scratch_.data(), frame_len);
    Errc e = transmit(scratch_.data(), frame_len, deadline, how);
    if (e == Errc::kTimeout && channel_status() == Errc::kOk) {
      pending_decision_ = d;  // not accepted: the next datagram takes this decision
      return e;
    }
    if (e != Errc::kOk) {
      std::lock_guard lock(mu_);
      return fail_locked(e);
    }
  }
  ++next_sequence_;
  bump(sent_);
  bump(bytes_, head_len + len);
  if (d.action == FaultAction::kDrop) bump(dropped_);
  if (d.action == FaultAction::kCorrupt) bump(corrupted_);
  if (d.action != FaultAction::kDrop) bump(delivered_);
  return Errc::kOk;
}

// DmqSender::send(kDma) may return kTimeout after the frame was queued (it
// then lands anyway); here kTimeout only ever means "not queued". Over udp
// the frame is copied into the socket at once, PIO or DMA alike.
Errc DatagramSender::transmit(const std::byte* frame, size_t len, Deadline deadline,
                              Transfer how) {
  if (udp_) return udp_->send(frame, len, deadline);
  if (how == Transfer::kPio) return dmq_->send(frame, len, deadline, how);
  auto ticket = dmq_->send_dma_async(frame, len, deadline);
  if (!ticket) return ticket.error();
  if (Errc e = dmq_->dma().wait(ticket.value(), Deadline::never()); e != Errc::kOk) return e;
  return dmq_->dma().error();
}

Errc DatagramSender::send_delayed(const void* head, size_t head_len, const void* data, size_t len,
                                  Deadline deadline, Transfer how) {
  const size_t frame_len = kFrameHeader + head_len + len;
  std::unique_lock lock(mu_);
  // Room first, so that a timeout consumes neither a sequence number nor a decision.
  const bool room = wait_until(owner_cv_, lock, deadline, [&] {
    return status_.load(std::memory_order_relaxed) != Errc::kOk ||
           held_bytes_ + frame_len <= config_.delay_line_bytes;
  });
  if (Errc st = status_.load(std::memory_order_relaxed); st != Errc::kOk) return st;
  if (!room) return Errc::kTimeout;
  const FaultDecision d = faults_.next();
  const uint64_t sequence = next_sequence_++;
  bump(sent_);
  bump(bytes_, head_len + len);
  if (d.action == FaultAction::kDrop) {
    bump(dropped_);
    return Errc::kOk;
  }
  if (d.action == FaultAction::kCorrupt) bump(corrupted_);
  std::vector<std::byte> frame;
  if (!spare_.empty()) {
    frame = std::move(spare_.back());
    spare_.pop_back();
  }
  frame.resize(frame_len);
  // Encoding under the lock keeps it simple; the link thread only needs the
  // lock between frames, so it never waits long.
  encode_frame(frame.data(), sequence, head, head_len, data, len);
  FaultInjector::apply(d, frame.data(), frame_len);
  held_.push_back(Held{Clock::now() + config_.faults.delay, std::move(frame), how});
  held_bytes_ += frame_len;
  lock.unlock();
  link_cv_.notify_one();
  return Errc::kOk;
}

void DatagramSender::link_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    if (stop_) return;
    if (held_.empty()) {
      link_cv_.wait(lock, [&] { return stop_ || !held_.empty(); });
      continue;
    }
    const Clock::time_point due = held_.front().due;
    if (Clock::now() < due) {
      // Woken early by a new frame or stop: the head is still the head (FIFO).
      link_cv_.wait_until(lock, due, [&] { return stop_; });
      continue;
    }
    Held h = std::move(held_.front());
    held_.pop_front();
    in_flight_ = true;
    lock.unlock();
    Errc e = transmit(h.frame.data(), h.frame.size(), Deadline::never(), h.how);
    lock.lock();
    in_flight_ = false;
    held_bytes_ -= h.frame.size();
    if (e == Errc::kOk) {
      bump(delivered_);
      spare_.push_back(std::move(h.frame));
    } else {
      fail_locked(e);
      for (Held& rest : held_) held_bytes_ -= rest.frame.size();
      held_.clear();
      stop_ = true;
    }
    owner_cv_.notify_all();
  }
}

Errc DatagramSender::close(Deadline deadline) {
  if (Errc st = status(); st != Errc::kOk) return st;
  if (link_.joinable()) {
    std::unique_lock lock(mu_);
    const bool drained = wait_until(owner_cv_, lock, deadline, [&] {
      return status_.load(std::memory_order_relaxed) != Errc::kOk || (held_.empty() && !in_flight_);
    });
    if (Errc st = status_.load(std::memory_order_relaxed); st != Errc::kOk) return st;
    if (!drained) return Errc::kTimeout;
    stop_ = true;
    lock.unlock();
    link_cv_.notify_all();
    link_.join();  // idle: it returns at once
  }
  // Over udp the peer learns of the close from the connection manager.
  Errc e = udp_ ? Errc::kOk : dmq_->close();
  std::lock_guard lock(mu_);
  fail_locked(Errc::kClosed);
  return e;
}

}  // namespace clan
