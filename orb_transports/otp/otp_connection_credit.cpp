// giop:otp connection: the out-queue. Packets the link has no credit for
// yet wait here, in order, and leave without the connection's lock held,
// so that a sender waiting for credit never stops this side from consuming,
// which is what returns credit to the peer.
#include "orb_transports/otp/otp_connection.hpp"

namespace clanorb {

using clan::Errc;

namespace {
// How long Recv, Peek and timers let a send wait for link credit: long
// enough for the link to probe the peer (it probes a stall after 100 us,
// DatagramLink::Config::probe_after, backing off, which is what recovers a
// lost credit ack), short enough not to hold up receiving. The connection's
// lock is not held meanwhile, and the link keeps reading.
clan::Deadline credit_wait() { return clan::Deadline::after(std::chrono::microseconds(2500)); }

// Datagrams waiting for credit with no thread in Recv: the timer service
// comes back for them this soon.
constexpr uint64_t kCreditRetryNs = 1'000'000;
}  // namespace

void OtpConnection::enqueue(const std::byte* packet, size_t len) {
  std::vector<std::byte> v;
  if (!spare_.empty()) {
    v = std::move(spare_.back());
    spare_.pop_back();
  }
  v.assign(packet, packet + len);
  outq_.push_back(std::move(v));
}

void OtpConnection::transmit(const std::byte* packet, size_t len) {
  // Another thread is draining the out-queue (with mu_ released), or packets
  // wait for credit: this one goes after them.
  if (sending_ || !outq_.empty()) {
    enqueue(packet, len);
    return;
  }
  // Never waits: mu_ is held. No other thread of ours is in
  // a link send (sending_ is false), so nothing here blocks for long.
  const Errc e = link_->send(packet, len, clan::Deadline::already_expired());
  if (e == Errc::kTimeout || e == Errc::kWouldBlock) enqueue(packet, len);  // no credit yet
  // Other errors: lost like any packet (the protocol recovers) or the link is
  // gone (Recv sees it).
}

void OtpConnection::flush(std::unique_lock<std::mutex>& lk, std::optional<clan::Deadline> deadline) {
  // The service only needs a wake-up no later than the engine's next timer:
  // a wake-up that comes early finds nothing due and reschedules (calling
  // on_timer early is harmless). So only a timer that moved earlier costs a
  // call into the service; during traffic, timers only move later.
  schedule_timer_locked();
  if (sending_ || outq_.empty()) return;  // the thread draining the queue sends these too
  if (!deadline) deadline = credit_wait();
  sending_ = true;
  while (!outq_.empty()) {
    std::vector<std::byte> pkt = std::move(outq_.front());
    outq_.pop_front();
    lk.unlock();
    const Errc e = link_->send(pkt.data(), pkt.size(), *deadline);
    lk.lock();
    if (e == Errc::kTimeout || e == Errc::kWouldBlock) {  // no credit yet: keep it, in order
      outq_.push_front(std::move(pkt));
      break;
    }
    if (spare_.size() < 16) spare_.push_back(std::move(pkt));
    // Other errors: the packet is lost like any other (the protocol recovers)
    // or the link is gone (Recv sees it).
  }
  sending_ = false;
  retry_sends_later();
}

void OtpConnection::retry_sends_later() {
  // A thread in Recv retries them itself; one draining the queue calls this
  // when it is done.
  if (outq_.empty() || in_recv_ > 0 || sending_ || ended_) return;
  const uint64_t due = clan::now_ns() + kCreditRetryNs;
  if (scheduled_ != 0 && scheduled_ <= due) return;
  scheduled_ = due;
  OtpTimerService::instance().schedule(this, due);
}

void OtpConnection::push_out(std::unique_lock<std::mutex>& lk, clan::Deadline deadline) {
  for (;;) {
    // Nothing waits for credit (the usual case: no clock read), another
    // thread drains the queue (ours go too), or nobody will read: as before.
    if (sending_ || outq_.empty() || ended_) return flush(lk, deadline);
    // Slices as long as credit_wait(): each link wait probes a stalled peer
    // after 100 us (backing off), which is what recovers a lost credit ack.
    const clan::Deadline slice = credit_wait();
    flush(lk, slice.when() < deadline.when() ? slice : deadline);
    if (deadline.expired()) return;
    if (engine_.role() == otp::Role::kClient) take_in(lk);
  }
}

}  // namespace clanorb
