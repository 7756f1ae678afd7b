// Waiting on a VI (paper 001 sect. 3.4): VipSendWait and VipRecvWait look
// under the VI's lock, progressing it, then sleep without it until something
// may have changed. No library thread: the waiting thread makes the progress.
#include <optional>

#include "clan_emul/futex.hpp"
#include "via/internal.hpp"

namespace via {

namespace {

using clan::Errc;

// VipRecvWait polls this many times before it reads the clock and waits
// (unless its VI blocks).
constexpr int kQuickSpins = 256;

// What a waiter found under the VI's lock, its done queue empty.
struct Look {
  enum Next { kSleep, kAgain, kReturn } next;
  VIP_RETURN result = VIP_SUCCESS;  // kReturn
};

// A waiter would sleep, but the VI has held writes: nothing would wake it
// for them (paper 004 sect. 3.2). Without the VI's lock, so its other work
// and arriving messages go on, it waits up to a slice for the peer's
// endpoint or, that resident (the DMA engine took no more of the stream's
// requests), for the stream to move; then it looks at the VI again.
void wait_for_peer(Conn& c, const clan::Deadline& deadline) {
  const auto slice = clan::Deadline::after(Vi::kHeldSlice);
  const clan::Deadline until = slice.when() < deadline.when() ? slice : deadline;
  if (!c.peer_block.resident()) {
    c.peer_block.wait_resident(until);
    return;
  }
  c.dma->wait(c.dma->completed() + 1, until);
}

// The loop both waits share. A Waiter (SendWaiter, RecvWaiter):
//   leave()  under vi->mu: no longer counted among those asleep;
//   look()   under vi->mu: return, look again, or sleep (counted);
//   spin()   without the lock, before the clock is read: true if it came;
//   sleep(d) without the lock: until something may have changed, or d.
template <class Waiter>
VIP_RETURN wait_for(Vi* vi, VIP_ULONG timeout, Fifo<Done>& done, VIP_DESCRIPTOR** out, Waiter& w) {
  std::optional<clan::Deadline> deadline;  // read the clock only to sleep
  for (;;) {
    std::shared_ptr<Conn> held;  // the channel whose writes are held
    {
      std::lock_guard lock(vi->mu);
      w.leave();
      vi->progress();
      if (!done.empty()) return take_done(done, out);
      const Look look = w.look();
      if (look.next == Look::kReturn) return look.result;
      if (look.next == Look::kAgain) continue;
      if (vi->held) held = vi->conn;  // waited for, then retried
    }
    if (!held && w.spin()) continue;
    if (!deadline) deadline = deadline_ms(timeout);
    if (deadline->expired()) {
      std::lock_guard lock(vi->mu);
      w.leave();
      return VIP_TIMEOUT;
    }
    if (held) {
      wait_for_peer(*held, *deadline);
    } else {
      w.sleep(*deadline);
    }
  }
}

// VipSendWait: the oldest send waits on its DMA ticket or, deferred, for the
// peer's next receive descriptor (the cookie ring's doorbell).
class SendWaiter {
 public:
  explicit SendWaiter(Vi* vi) : vi_(vi) {}

  // The last thread waiting for a receive descriptor lets the peer stop
  // ringing the doorbell (unless a send CQ wants to hear).
  void leave() {
    if (!waiting_) return;
    waiting_ = false;
    if (--vi_->cookie_waiters == 0 && !vi_->send_cq && waited_) {
      waited_->ck_rx->want_doorbell(false, clan::Deadline::already_expired());
    }
  }

  Look look() {
    mode_ = vi_->wait_mode();
    ticket_ = 0;
    seen_ = 0;
    transfer_full_ = false;
    if (vi_->sends.empty()) {
      return {Look::kReturn, vi_->state == VIP_STATE_CONNECTED ? VIP_NOT_DONE : VIP_INVALID_STATE};
    }
    c_ = vi_->conn;
    if (!c_) return {Look::kReturn, VIP_INVALID_STATE};
    if (vi_->sends.front().in_flight) {
      ticket_ = vi_->sends.front().ticket;
      return {Look::kSleep};
    }
    // From here the peer rings the doorbell when it posts (or, its endpoint
    // on the host, the next look asks again: the sleep is a slice).
    if (vi_->cookie_waiters++ == 0) {
      c_->ck_rx->want_doorbell(true, clan::Deadline::already_expired());
    }
    waiting_ = true;
    waited_ = c_;
    seen_ = vi_->send_completions.load(std::memory_order_relaxed);
    transfer_full_ = c_->tq_tx->space() == Errc::kWouldBlock;
    return {Look::kSleep};
  }

  bool spin() { return false; }

  void sleep(const clan::Deadline& deadline) {
    if (ticket_ != 0) {
      c_->dma->wait(ticket_, deadline, mode_);
      return;
    }
    // A deferred send waits for the peer's next receive descriptor (or the
    // transfer queue to drain: rare, so a short slice). With the queue
    // full, descriptors already there are no reason to look again: a peer
    // that posts but never drains would have us spin.
    auto slice = clan::Deadline::after(std::chrono::milliseconds(2));
    c_->ck_rx->tripwire().wait(
        [this] {
          return (!transfer_full_ && c_->ck_rx->readable()) ||
                 c_->down.load(std::memory_order_acquire) != 0 ||
                 vi_->send_completions.load(std::memory_order_seq_cst) != seen_;
        },
        slice.when() < deadline.when() ? slice : deadline, mode_);
  }

 private:
  Vi* vi_;
  std::shared_ptr<Conn> c_;
  clan::WaitMode mode_ = clan::WaitMode::kAdaptive;  // the VI's, read under its lock
  uint64_t ticket_ = 0;
  uint64_t seen_ = 0;
  bool transfer_full_ = false;
  bool waiting_ = false;          // counted in vi_->cookie_waiters
  std::shared_ptr<Conn> waited_;  // the channel `waiting_` asked to ring
};

// VipRecvWait: the next record's tag, then the tripwire on the transfer
// queue's write pointer (sect. 3.4).
class RecvWaiter {
 public:
  RecvWaiter(Vi* vi, VIP_ULONG timeout) : vi_(vi), timeout_(timeout) {}

  void leave() {
    if (waiting_) --vi_->recv_waiters;
    waiting_ = false;
  }

  Look look() {
    if (vi_->state != VIP_STATE_CONNECTED || !vi_->conn) return {Look::kReturn, VIP_INVALID_STATE};
    if (vi_->posted.empty()) return {Look::kReturn, VIP_NOT_DONE};
    if (timeout_ == 0) return {Look::kReturn, VIP_TIMEOUT};
    mode_ = vi_->wait_mode();
    // While the message is on its way, take the peer's next receive
    // descriptor, a cache miss, off the path of the send that will need it.
    // Not while sends are queued: progress() just gave them what there was,
    // and one taken here would wait, unseen by a VipSendWait watching the
    // ring, until the next progress. Once per wait: a slot the peer has not
    // written yet, read again at every wake-up, would take its line from
    // the peer's next post each time.
    if (!looked_ahead_ && vi_->remote.empty() && vi_->sends.empty()) {
      looked_ahead_ = true;
      vi_->pull_cookie();
      if (vi_->state != VIP_STATE_CONNECTED) return {Look::kAgain};  // garbage: the VI broke
    }
    c_ = vi_->conn;
    seen_ = vi_->recv_completions.load(std::memory_order_relaxed);
    // From here, a completion found by another thread wakes us.
    ++vi_->recv_waiters;
    waiting_ = true;
    return {Look::kSleep};
  }

  // A message often lands within a few cache-line round trips: look for it
  // before reading the clock (microseconds at most, against a TimeOut in ms).
  bool spin() const {
    if (mode_ == clan::WaitMode::kBlock) return false;
    for (int i = 0; i < kQuickSpins; ++i) {
      if (ready()) return true;
      clan::cpu_relax();
    }
    return false;
  }

  void sleep(const clan::Deadline& deadline) {
    c_->tq_rx->tripwire().wait([this] { return ready(); }, deadline, mode_);
  }

 private:
  // Another thread progressing this VI (VipCQWait, VipRecvDone) may take the
  // record first: its completion wakes us too.
  bool ready() const {
    return c_->tq_rx->readable() || c_->down.load(std::memory_order_acquire) != 0 ||
           vi_->recv_completions.load(std::memory_order_seq_cst) != seen_;
  }

  Vi* vi_;
  VIP_ULONG timeout_;
  clan::WaitMode mode_ = clan::WaitMode::kAdaptive;  // the VI's, read under its lock
  std::shared_ptr<Conn> c_;
  uint64_t seen_ = 0;
  bool waiting_ = false;       // counted in vi_->recv_waiters
  bool looked_ahead_ = false;  // the peer's next descriptor was looked for
};

}  // namespace

clan::WaitMode Vi::wait_mode() const { return wait_mode_of(ext.WaitMode, nic->effective_wait_mode()); }

VIP_RETURN wait_send(Vi* vi, VIP_ULONG timeout, VIP_DESCRIPTOR** out) {
  SendWaiter w(vi);
  return wait_for(vi, timeout, vi->send_done, out, w);
}

VIP_RETURN wait_recv(Vi* vi, VIP_ULONG timeout, VIP_DESCRIPTOR** out) {
  RecvWaiter w(vi, timeout);
  return wait_for(vi, timeout, vi->recv_done, out, w);
}

}  // namespace via
