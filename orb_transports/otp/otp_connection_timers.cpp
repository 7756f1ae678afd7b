// giop:otp connection: its timers. A thread in Recv runs the engine's
// timers itself; the process's timer service runs them for connections
// nobody is waiting on, and watches idle clients' links.
#include "orb_transports/otp/otp_connection.hpp"

namespace clanorb {

namespace {
// Idle watch (see the header): first look this long after the connection
// was found idle (at the engine's idle acknowledgement, typically), when a
// server that missed the acknowledgement has had time to repeat its reply;
// then at doubling intervals, until the server has given up repeating (the
// peer timeout, engine_config) for certain: watch_last_ns().
constexpr uint64_t kWatchFirstNs = 25'000'000;
}  // namespace

std::optional<uint64_t> OtpConnection::next_wakeup() const {
  const auto t = engine_.next_timer();
  if (watch_due_ == 0 || ended_) return t;
  return t && *t < watch_due_ ? *t : watch_due_;
}

void OtpConnection::schedule_timer_locked() {
  auto t = next_wakeup();
  // A thread in Recv runs the timers on time itself; the service only stands
  // by in case that thread is held up (see on_timer_due).
  if (t && in_recv_ > 0) *t += reader_grace_ns();
  // A wake-up already asked for that comes up to the grace late is kept: a
  // client's next Send moves its timer to less than that before the one the
  // service set while the client waited in Recv, and asking again at every
  // such Send woke the service thread twice per RTO, preempting the client
  // or the server on a busy host. The thread in Recv after the Send runs the
  // timer on time; what the service may run up to the grace late is what no
  // thread waits for (a server's own retransmission, which the client's
  // NACK at its RTO asks for anyway; a client's idle ack).
  if (t && (scheduled_ == 0 || *t + reader_grace_ns() < scheduled_)) {
    scheduled_ = *t;
    OtpTimerService::instance().schedule(this, *t);
  }
}

void OtpConnection::on_timer_due() {
  std::unique_lock lock(mu_);
  scheduled_ = 0;  // the service dropped us before calling
  const uint64_t now = clan::now_ns();
  if (leave_timer_to_reader(now)) return;
  const bool client = engine_.role() == otp::Role::kClient;
  // What has arrived first (clients nobody reads; see take_in): timers act
  // on the latest, and a server repeating itself into an unread link gets
  // its answer (the idle watch).
  if (client) take_in(lock);
  if (client && !ended_) advance_idle_watch(now);
  if (const auto due = engine_.next_timer(); due && *due <= now) engine_.on_timer(now);
  flush(lock);
  if (client && !ended_) keep_busy_client_in_view(now);
}

bool OtpConnection::leave_timer_to_reader(uint64_t now) {
  const auto t = engine_.next_timer();
  if (in_recv_ == 0 || !t) return false;
  // A thread in Recv runs the timers itself, after taking in what has
  // arrived. Run here while datagrams wait in the link, a timer would act on
  // what the engine knew before them: a reply that has landed, but whose
  // reader has not been scheduled yet, would draw a NACK and a needless
  // retransmission of the whole reply, which is what an oversubscribed host
  // least needs. So it is left to that reader (looked at again an RTO on).
  // With nothing waiting, the timer runs here on time: the reader may be
  // the one held up.
  if (link_->unread()) {
    scheduled_ = now + rto_ns_;
    OtpTimerService::instance().schedule(this, scheduled_);
    return true;
  }
  // A thread in Recv has not had the grace yet (this wake-up was asked for
  // before it came in): it runs the timer. Two threads at the same moment
  // would only compete for the lock and the CPUs, just when the recovery
  // traffic after a loss is due.
  if (now < *t + reader_grace_ns()) {
    scheduled_ = *t + reader_grace_ns();
    OtpTimerService::instance().schedule(this, scheduled_);
    return true;
  }
  return false;
}

void OtpConnection::advance_idle_watch(uint64_t now) {
  if (watch_due_ == 0) {
    // Idle (typically the engine's idle-ack timer brought us here): watch.
    if (in_recv_ == 0 && engine_.state() == otp::State::kIdle) {
      watch_interval_ = kWatchFirstNs;
      watch_due_ = now + kWatchFirstNs;
    }
  } else if (now >= watch_due_) {
    watch_interval_ *= 2;
    watch_due_ = watch_interval_ > watch_last_ns() ? 0 : now + watch_interval_;
  }
}

// A client making calls, caught between two of them (its next timer is the
// idle ack, far off): come back within an RTO and the grace anyway. Its
// next Send then finds a wake-up near enough for its RTO (the engine's
// current one, which a busy server's slow replies have raised) and does not
// have to wake this thread to bring ours forward (schedule_timer_locked).
void OtpConnection::keep_busy_client_in_view(uint64_t now) {
  const uint64_t calls = engine_.stats().calls;
  const uint64_t busy_wake = now + engine_.rto_ns() + reader_grace_ns();
  if (calls != calls_at_timer_ && (scheduled_ == 0 || scheduled_ > busy_wake)) {
    scheduled_ = busy_wake;
    OtpTimerService::instance().schedule(this, scheduled_);
  }
  calls_at_timer_ = calls;
}

}  // namespace clanorb
