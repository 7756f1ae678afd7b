// The data path of a UdpChannel: sending with fi_inject, taking completions
// off the queue (and judging them), and waiting for them under the fabric's
// spin-then-block policy.
#include "clan_emul/wire/udp_channel.hpp"

#include <poll.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <unistd.h>

#include <cstring>

#include "clan_emul/counter.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/wire/fi_error.hpp"
#include "clan_emul/wire/udp_channel_objects.hpp"
#include "clan_emul/wire/udp_notifier.hpp"

namespace clan::wire {

namespace {

timespec relative(Deadline deadline) {
  const auto left = deadline.when() - Clock::now();
  const int64_t ns = left.count() > 0 ? std::chrono::nanoseconds(left).count() : 0;
  return timespec{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
}

}  // namespace

// How receive() blocks once announced (spin_wait.hpp's `Sleep`): in ppoll
// on the queue's wait fd and the wake-up eventfd.
struct UdpChannel::Sleep {
  UdpChannel* channel;
  void watch() {}
  bool block(Deadline deadline) { return channel->block(deadline); }
};

Errc UdpChannel::send(const void* frame, size_t len, Deadline deadline) {
  if (frame == nullptr || len == 0 || len > options_.max_frame || !has_peer_) {
    return Errc::kInvalidArgument;
  }
  for (;;) {
    if (Errc st = send_status(); st != Errc::kOk) return st;
    const ssize_t r = fi_inject(fi_->ep, frame, len, peer_);
    if (r == 0) return Errc::kOk;
    if (r != -FI_EAGAIN) {
      return fi_fail(static_cast<int>(r), "udp channel: fi_inject of %zu bytes to the peer", len);
    }
    bump(send_busy_);  // the socket's send buffer is full: the kernel drains it
    if (deadline.expired()) return Errc::kTimeout;
    cpu_relax();
  }
}

Errc UdpChannel::repost(size_t slot) {
  std::byte* buf = buffers_.data() + slot * buffer_bytes_;
  const ssize_t r = fi_recv(fi_->ep, buf, buffer_bytes_, nullptr, FI_ADDR_UNSPEC, buf);
  if (r != 0) return fi_fail(static_cast<int>(r), "udp channel: fi_recv (buffer %zu)", slot);
  return Errc::kOk;
}

Errc UdpChannel::release() {
  if (pending_slot_ == SIZE_MAX) return Errc::kInvalidArgument;
  const size_t slot = pending_slot_;
  pending_slot_ = SIZE_MAX;
  return repost(slot);
}

// The buffer slot a completion's context names, or SIZE_MAX if it names none.
static size_t slot_of(const void* context, const std::byte* base, size_t bytes, size_t count) {
  const auto p = reinterpret_cast<uintptr_t>(context), b = reinterpret_cast<uintptr_t>(base);
  if (p < b || (p - b) % bytes != 0 || (p - b) / bytes >= count) return SIZE_MAX;
  return (p - b) / bytes;
}

Errc UdpChannel::take_error() {
  fi_cq_err_entry err{};
  const ssize_t r = fi_cq_readerr(fi_->cq, &err, 0);
  if (r == -FI_EAGAIN) return Errc::kWouldBlock;
  if (r < 0) return fi_fail(static_cast<int>(r), "udp channel: fi_cq_readerr");
  bump(received_);
  bump(err.err == FI_ETRUNC ? truncated_ : errors_);
  const size_t slot = slot_of(err.op_context, buffers_.data(), buffer_bytes_,
                              options_.receive_buffers);
  if ((err.flags & FI_RECV) && slot != SIZE_MAX) return repost(slot);
  return Errc::kOk;
}

// kOk: a good frame in *frame; kWouldBlock: none there (what was there was
// discarded); anything else: the queue failed.
Errc UdpChannel::poll_once(UdpFrame* frame) {
  for (;;) {
    fi_cq_msg_entry e{};
    fi_addr_t source = FI_ADDR_NOTAVAIL;
    const ssize_t n = fi_cq_readfrom(fi_->cq, &e, 1, &source);
    if (n == -FI_EAGAIN) {
      // Run dry: the next arrival is worth an event (udp_notifier.hpp).
      if (UdpNotifier* notifier = armer_.load(std::memory_order_acquire)) notifier->arm();
      return Errc::kWouldBlock;
    }
    if (n == -FI_EAVAIL) {
      if (Errc er = take_error(); er != Errc::kOk) return er;
      continue;
    }
    if (n < 0) return fi_fail(static_cast<int>(n), "udp channel: fi_cq_readfrom");
    const size_t slot = slot_of(e.op_context, buffers_.data(), buffer_bytes_,
                                options_.receive_buffers);
    if (!(e.flags & FI_RECV) || slot == SIZE_MAX) continue;  // not one of our receives
    bump(received_);
    if (e.len > options_.max_frame || source != peer_ || !has_peer_) {
      bump(e.len > options_.max_frame ? truncated_ : foreign_);
      if (Errc er = repost(slot); er != Errc::kOk) return er;
      continue;
    }
    pending_slot_ = slot;
    *frame = UdpFrame{buffers_.data() + slot * buffer_bytes_, e.len};
    return Errc::kOk;
  }
}

bool UdpChannel::may_block() {
  fid* f = &fi_->cq->fid;
  return fi_trywait(fi_->fabric, &f, 1) == FI_SUCCESS;
}

bool UdpChannel::block(Deadline deadline) {
  if (!may_block()) return true;  // completions to read
  pollfd p[2] = {{wait_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  timespec ts{};
  if (!deadline.is_never()) ts = relative(deadline);
  const int n = ::ppoll(p, 2, deadline.is_never() ? nullptr : &ts, nullptr);
  return n != 0;  // -1 (a signal) counts as a wake-up: the caller looks again
}

Result<UdpFrame> UdpChannel::receive(Deadline deadline) {
  if (pending_slot_ != SIZE_MAX) return Errc::kInvalidArgument;
  UdpFrame frame{};
  Errc got = Errc::kWouldBlock;
  auto ready = [&] {
    if (receive_status() != Errc::kOk) return true;
    got = poll_once(&frame);
    if (got == Errc::kWouldBlock && peer_closed_.load(std::memory_order_acquire)) {
      got = Errc::kClosed;
    }
    return got != Errc::kWouldBlock;
  };
  Sleep sleep{this};
  if (Errc w = wait_until(ready, options_.wait, sleepers_, sleep, deadline); w != Errc::kOk) {
    return w;
  }
  if (Errc st = receive_status(); st != Errc::kOk) {
    if (pending_slot_ != SIZE_MAX) release();
    return st;
  }
  if (got != Errc::kOk) return got;
  return frame;
}

bool UdpChannel::readable() const {
  if (receive_status() != Errc::kOk || peer_closed_.load(std::memory_order_acquire)) return true;
  pollfd p{socket_fd_, POLLIN, 0};
  if (::poll(&p, 1, 0) > 0) return true;
  // Nothing there: whoever asked may now wait for an event.
  if (UdpNotifier* notifier = armer_.load(std::memory_order_acquire)) notifier->arm();
  return false;
}

void UdpChannel::abort_send(Errc reason) {
  Errc ok = Errc::kOk;
  tx_status_.compare_exchange_strong(ok, reason, std::memory_order_acq_rel);
}

void UdpChannel::abort_receive(Errc reason) {
  Errc ok = Errc::kOk;
  rx_status_.compare_exchange_strong(ok, reason, std::memory_order_acq_rel);
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t w = ::write(wake_fd_, &one, sizeof one);
}

void UdpChannel::peer_closed() {
  peer_closed_.store(true, std::memory_order_release);
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t w = ::write(wake_fd_, &one, sizeof one);
}

UdpChannelStats UdpChannel::stats() const {
  UdpChannelStats s;
  s.received = received_.load(std::memory_order_relaxed);
  s.truncated = truncated_.load(std::memory_order_relaxed);
  s.foreign = foreign_.load(std::memory_order_relaxed);
  s.errors = errors_.load(std::memory_order_relaxed);
  s.send_busy = send_busy_.load(std::memory_order_relaxed);
  if (const UdpNotifier* notifier = armer_.load(std::memory_order_acquire)) {
    s.events = notifier->posted();
  }
  return s;
}

}  // namespace clan::wire
