#include "orb_transports/otp/otp_connection.hpp"

#include <algorithm>
#include <cstring>

#include "clan_emul/spin_wait.hpp"
#include "orb_transports/common/omni_time.hpp"

#include <orbParameters.h>

OMNI_USING_NAMESPACE(omni)

namespace clanorb {

using clan::Errc;

namespace {
// How long Recv, Peek and timers let a send wait for link credit: long
// enough for the link to probe the peer (it probes a stall after 100 us, backing
// off, which is what recovers a lost credit ack), short enough not to hold up receiving.
// The connection's lock is not held meanwhile, and the link keeps reading.
// Chunks from this size on are sent with the copy-out trick (paper 002 sect.
// 4.4): it costs one extra small packet, which pays only for large chunks.
constexpr size_t kInPlaceMin = 4096;

clan::Deadline credit_wait() { return clan::Deadline::after(std::chrono::microseconds(2500)); }

// Datagrams waiting for credit with no thread in Recv: the timer service
// comes back for them this soon.
constexpr uint64_t kCreditRetryNs = 1'000'000;

// Around the moment recovery traffic is due after a loss (the engine's
// recovery_due(): our retransmission timer, or the peer's NACK), Recv polls
// instead of sleeping: a sleeping thread wakes tens of microseconds late
// (timer slack, scheduling), and after a loss that delay adds to the call
// twice, once on each side. Not while this thread's waits find the host
// oversubscribed (spin_wait.hpp): then the poll takes the CPU the peer needs.
constexpr uint64_t kPollBeforeNs = 150'000;
constexpr uint64_t kPollAfterNs = 150'000;

// Idle watch (see the header): first look this long after the connection
// was found idle (at the engine's idle acknowledgement, typically), when a
// server that missed the acknowledgement has had time to repeat its reply;
// then at doubling intervals, until the server has given up repeating (the
// peer timeout, engine_config) for certain: watch_last_ns().
constexpr uint64_t kWatchFirstNs = 25'000'000;

// The most a one-way may gather before omniORB sees it: what omniORB
// accepts as a message (-ORBgiopMaxMsgSize), plus fragment headers.
size_t max_oneway_bytes() {
  const size_t limit = orbParameters::giopMaxMsgSize;
  return limit + limit / 8;
}

// Already expired, like Deadline::now(), without reading the clock.
const clan::Deadline kPoll{clan::Clock::time_point{}};

otp::EngineConfig engine_config(size_t link_mtu, uint64_t give_up_ns) {
  otp::EngineConfig c;
  c.mtu = link_mtu;
  c.rto_ns = uint64_t{fabric_options().otp_rto_us} * 1000;
  c.rto_max_ns = 16 * c.rto_ns;  // the backoff's ceiling: 32 ms at the default RTO
  // Give up on a silent peer only after the connection manager's peer
  // timeout of timeouts (backoff included), whatever the RTO: a peer that is
  // stopped (SIGSTOP, a debugger) or unscheduled is waited for, as over tcp,
  // and a dead one is reported sooner by the connection manager.
  c.max_retries = otp::retries_lasting(c, give_up_ns);
  return c;
}
}  // namespace

OtpConnection::OtpConnection(std::shared_ptr<Fabric> fabric, std::unique_ptr<clan::DatagramLink> link,
                             otp::Role role, std::string my_address, std::string peer_address,
                             MonitoredEndpoint* endpoint)
    : MonitoredConnection(endpoint),
      fabric_(std::move(fabric)),
      link_(std::move(link)),
      my_address_(std::move(my_address)),
      peer_address_(std::move(peer_address)),
      give_up_ns_(static_cast<uint64_t>(
          std::chrono::nanoseconds(fabric_->oob().peer_timeout()).count())),
      engine_(role, engine_config(link_->mtu(), give_up_ns_)),
      rto_ns_(engine_.config().rto_ns),
      rxbuf_(link_->mtu()) {
  engine_.set_sink(this);
}

void OtpConnection::retire() { OtpTimerService::instance().forget(this); }

otp::Stats OtpConnection::protocol_stats() {
  std::lock_guard lock(mu_);
  return engine_.stats();
}

OtpConnection::~OtpConnection() {
  retire();  // a no-op if the most-derived destructor did it
  if (!ended_) log_end("released");  // a client's ORB going away: its counters, as at any end
  detach_from_endpoint();
}

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
  // Never waits (kPoll): mu_ is held. No other thread of ours is in
  // a link send (sending_ is false), so nothing here blocks for long.
  const Errc e = link_->send(packet, len, kPoll);
  if (e == Errc::kTimeout || e == Errc::kWouldBlock) enqueue(packet, len);  // no credit yet
  // Other errors: lost like any packet (the protocol recovers) or the link is
  // gone (Recv sees it).
}

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

bool OtpConnection::wait_turn(std::unique_lock<std::mutex>& lk, clan::Deadline deadline) {
  ++turn_waiters_;
  while (reading_) {
    if (deadline.is_never()) {
      turn_free_.wait(lk);
    } else if (turn_free_.wait_until(lk, deadline.when()) == std::cv_status::timeout) {
      break;
    }
  }
  --turn_waiters_;
  return !reading_;
}

void OtpConnection::end_turn() {
  reading_ = false;
  if (turn_waiters_ > 0) turn_free_.notify_all();
}

void OtpConnection::take_in(std::unique_lock<std::mutex>& lk) {
  // A thread in Recv consumes for us; a thread coming into Recv waits for
  // the turn, so we stop as soon as one is in. try_receive takes one frame
  // per call: credit acks and probes first.
  for (int frames = 0; frames < 64 && in_recv_ == 0 && !reading_ && !ended_; ++frames) {
    reading_ = true;
    lk.unlock();
    auto r = link_->try_receive(rxbuf_.data(), rxbuf_.size());
    lk.lock();
    end_turn();  // mu_ is held until the engine has the datagram
    if (r) {
      engine_.on_packet(rxbuf_.data(), r.value(), clan::now_ns());
    } else if (r.error() != Errc::kTimeout || !link_->unread()) {
      break;  // nothing more now; a broken link is Recv's to report
    }
  }
}

void OtpConnection::log_end(const char* why) {
  if (!omniORB::trace(10)) return;
  const otp::Stats s = engine_.stats();
  const clan::DatagramLinkStats l = link_->stats();
  omniORB::logger log;
  log << "giop:otp: connection " << my_address_.c_str() << " -> " << peer_address_.c_str()
      << " ends: " << why << " (state " << static_cast<int>(engine_.state()) << ", calls " << s.calls
      << ", timeouts " << s.timeouts << ", nacks sent " << s.nacks_sent << ", call acks received "
      << s.call_acks_received << ", retransmitted " << s.packets_retransmitted << "; link: sent "
      << l.data_sent << ", received " << l.data_received << ", lost " << l.data_lost << ", credit stalls "
      << l.credit_stalls << ", probes " << l.probes_sent << " (lost " << l.probes_lost << "), probes received "
      << l.probes_received << ", credit acks sent " << l.credit_acks_sent << " (lost " << l.credit_acks_lost
      << "), received " << l.credit_acks_received << ", most queued " << l.max_queued << ")\n";
}

bool OtpConnection::collect_locked() {
  otp::Engine::Received r;
  while (engine_.next_received(r)) {
    switch (r.what) {
      case otp::Delivery::kData:
        if (r.exactly_once) {
          ready_.push_back(std::move(r.data));
        } else {
          // A one-way reaches omniORB only whole (see the header comment),
          // so omniORB's own size limit cannot act on it: ours does, with
          // an eighth more for the headers of its fragments.
          if (oneway_refused_) break;  // the rest of one refused below
          if (oneway_.size() + r.data.size() > max_oneway_bytes()) {
            if (!ended_) log_end("a one-way request larger than giopMaxMsgSize");
            ended_ = true;
            oneway_refused_ = true;
            oneway_ = {};
            break;
          }
          oneway_.insert(oneway_.end(), r.data.begin(), r.data.end());
          if (r.complete) {
            ready_.push_back(std::move(oneway_));
            oneway_.clear();
          }
        }
        break;
      case otp::Delivery::kAbort:
        oneway_.clear();  // part of a one-way was lost: it never happened
        break;
      case otp::Delivery::kEof:
      case otp::Delivery::kBad:
        if (!ended_ && r.what == otp::Delivery::kBad) log_end("the protocol gave up");
        ended_ = true;
        break;
    }
  }
  return !ended_;
}

int OtpConnection::send_to_engine(std::byte* data, size_t len, bool complete, bool exactly_once,
                                  bool in_place, clan::Deadline deadline, uint64_t now) {
  std::unique_lock lock(mu_);
  if (ended_) return -1;
  if (now == 0) now = clan::now_ns();
  watch_due_ = 0;  // a call: the idle watch starts over when idle again
  // omniORB's buffer is valid only during Send: exactly-once packets keep a
  // copy for retransmission (taken after the first transmission); one-ways
  // go without any copy. See omnitransport/DESIGN.md.
  otp::Errc e = in_place ? engine_.send_in_place(data, len, complete, exactly_once, otp::Retain::kCopy, now)
                         : engine_.send(data, len, complete, exactly_once, now);
  push_out(lock, deadline);
  return e == otp::Errc::kOk ? 0 : -1;
}

int OtpConnection::Send(void* buf, size_t sz, const omni_time_t& deadline) {
  auto* data = static_cast<std::byte*>(buf);
  // Bytes that start with a GIOP header were marshalled into omniORB's own
  // buffer; others may be application memory sent directly (large octet
  // sequences), possibly read-only or shared: never written to.
  const bool omni_buffer = framer_.at_header();
  const GiopFramer::Piece p = framer_.next(data, sz);
  if (!p.valid) {
    omniORB::logs(10, "giop:otp: outgoing bytes are not GIOP; closing the connection");
    return -1;
  }
  uint64_t now = 0;  // read with the deadline (0: not read), the engine's time for this chunk
  const clan::Deadline d = to_deadline(deadline, &now);
  if (p.close) {
    // omniTransport has no messages the server starts: a CloseConnection
    // becomes the end of the connection, which the peer sees as a close.
    link_->close();
    return static_cast<int>(p.len);
  }
  if (!p.known) {  // the request header is split: hold it until it says
    undecided_.insert(undecided_.end(), data, data + p.len);
    return static_cast<int>(p.len);
  }
  if (!undecided_.empty()) {
    std::vector<std::byte> head;
    head.swap(undecided_);
    if (send_to_engine(head.data(), head.size(), false, p.expects_reply, false, d, now) < 0) return -1;
    undecided_.swap(head);  // keep the capacity
    undecided_.clear();
  }
  const bool in_place = omni_buffer && p.len >= kInPlaceMin;
  if (send_to_engine(data, p.len, p.ends_call, p.expects_reply, in_place, d, now) < 0) return -1;
  return static_cast<int>(p.len);
}

int OtpConnection::Recv(void* buf, size_t sz, const omni_time_t& deadline) {
  uint64_t now = 0;  // read with the deadline, else when first needed, then after each datagram
  const clan::Deadline d = to_deadline(deadline, &now);
  auto* out = static_cast<std::byte*>(buf);
  std::unique_lock lock(mu_);
  // While this thread is in Recv it runs the engine's timers itself, each
  // after reading what the link has: the timer service leaves them alone
  // (see on_timer_due). On the way out (mu_ still held) the service is
  // asked for the timers this thread leaves behind.
  struct Waiting {
    OtpConnection& c;
    explicit Waiting(OtpConnection& conn) : c(conn) { ++c.in_recv_; }
    ~Waiting() {
      --c.in_recv_;
      c.schedule_timer_locked();
      c.retry_sends_later();
    }
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;
  } waiting(*this);
  for (;;) {
    collect_locked();
    if (!ready_.empty()) {
      size_t got = 0;
      while (got < sz && !ready_.empty()) {
        std::vector<std::byte>& front = ready_.front();
        const size_t n = std::min(sz - got, front.size() - ready_off_);
        std::memcpy(out + got, front.data() + ready_off_, n);
        got += n;
        ready_off_ += n;
        if (ready_off_ == front.size()) {
          engine_.recycle(std::move(front));
          ready_.pop_front();
          ready_off_ = 0;
        }
      }
      return static_cast<int>(got);
    }
    if (ended_) return -1;
    if (now == 0) now = clan::now_ns();
    if (auto t = engine_.next_timer(); t && *t <= now) engine_.on_timer(now);
    flush(lock);  // never waits long for credit
    // Wait for a datagram, the engine's next timer, or the caller's deadline;
    // while packets wait for credit, in short slices so they leave as soon as
    // the credit (taken off the ring by the link) is there.
    clan::Deadline until = d;
    auto sooner = [&](uint64_t at_ns) {
      const auto at = clan::Deadline(clan::Clock::time_point(std::chrono::nanoseconds(at_ns)));
      if (until.is_never() || at.when() < until.when()) until = at;
    };
    if (auto t = engine_.next_timer()) sooner(*t);
    if (!outq_.empty()) sooner(now + 200'000);
    if (auto due = engine_.recovery_due()) {
      if (now + kPollBeforeNs < *due) {
        sooner(*due - kPollBeforeNs);  // sleep until shortly before
      } else {
        // Inside the window; it lasts past the due moment (a timer that
        // fired moves recovery_due() on, but the answer is still to come).
        poll_until_ = std::max(poll_until_, *due + kPollAfterNs);
      }
    }
    if (reading_) {
      // Another thread is between the link and the engine (take_in stops
      // after one datagram now that we are in): wait, then take what it fed.
      if (!wait_turn(lock, d)) return 0;
      now = clan::now_ns();
      continue;
    }
    const bool poll = now < poll_until_ && !clan::spin_history.oversubscribed();
    reading_ = true;
    lock.unlock();
    auto r = link_->receive(rxbuf_.data(), rxbuf_.size(), poll ? kPoll : until);
    lock.lock();
    end_turn();  // mu_ is held until the engine has the datagram
    now = clan::now_ns();
    if (r) {
      engine_.on_packet(rxbuf_.data(), r.value(), now);
      // A stream of datagrams with nothing for omniORB yet (a long one-way)
      // must not hold the caller past its deadline.
      if (!d.is_never() && clan::Clock::time_point(std::chrono::nanoseconds(now)) >= d.when()) {
        collect_locked();
        if (ready_.empty() && !ended_) return 0;
      }
    } else if (r.error() == Errc::kTimeout) {
      if (d.expired()) return 0;
    } else {
      // The link ended (closed, peer dead, corrupt): a hard error (sect. 4.2.1 iii).
      if (!ended_) log_end(clan::to_string(r.error()));
      ended_ = true;  // logged; fail() delivers kBad
      engine_.fail(now);
      collect_locked();
      if (ready_.empty()) return -1;
    }
  }
}

void OtpConnection::on_timer_due() {
  std::unique_lock lock(mu_);
  scheduled_ = 0;  // the service dropped us before calling
  const uint64_t now = clan::now_ns();
  const auto t = engine_.next_timer();
  // A thread in Recv runs the timers itself, after taking in what has
  // arrived. Run here while datagrams wait in the link, a timer would act on
  // what the engine knew before them: a reply that has landed, but whose
  // reader has not been scheduled yet, would draw a NACK and a needless
  // retransmission of the whole reply, which is what an oversubscribed host
  // least needs. So it is left to that reader (looked at again an RTO on).
  // With nothing waiting, the timer runs here on time: the reader may be
  // the one held up.
  if (in_recv_ > 0 && t && link_->unread()) {
    scheduled_ = now + rto_ns_;
    OtpTimerService::instance().schedule(this, scheduled_);
    return;
  }
  // A thread in Recv has not had the grace yet (this wake-up was asked for
  // before it came in): it runs the timer. Two threads at the same moment
  // would only compete for the lock and the CPUs, just when the recovery
  // traffic after a loss is due.
  if (in_recv_ > 0 && t && now < *t + reader_grace_ns()) {
    scheduled_ = *t + reader_grace_ns();
    OtpTimerService::instance().schedule(this, scheduled_);
    return;
  }
  // What has arrived first (clients nobody reads; see take_in): timers act
  // on the latest, and a server repeating itself into an unread link gets
  // its answer (the idle watch).
  if (engine_.role() == otp::Role::kClient) take_in(lock);
  if (engine_.role() == otp::Role::kClient && !ended_) {
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
  if (const auto due = engine_.next_timer(); due && *due <= now) engine_.on_timer(now);
  flush(lock);
  // A client making calls, caught between two of them (its next timer is
  // the idle ack, far off): come back within an RTO and the grace anyway.
  // Its next Send then finds a wake-up near enough for its RTO (the engine's
  // current one, which a busy server's slow replies have raised) and does
  // not have to wake this thread to bring ours forward (schedule_timer_locked).
  if (engine_.role() == otp::Role::kClient && !ended_) {
    const uint64_t calls = engine_.stats().calls;
    const uint64_t busy_wake = now + engine_.rto_ns() + reader_grace_ns();
    if (calls != calls_at_timer_ && (scheduled_ == 0 || scheduled_ > busy_wake)) {
      scheduled_ = busy_wake;
      OtpTimerService::instance().schedule(this, scheduled_);
    }
    calls_at_timer_ = calls;
  }
}

bool OtpConnection::readable() {
  {
    std::unique_lock lock(mu_);
    collect_locked();
    if (!ready_.empty() || ended_) return true;
    // The link may hold nothing but the engine's own traffic (a client's
    // acknowledgement, a NACK): a server's thread handed the connection for
    // that would wait in Recv for the next request, for good if the client
    // stays idle. So that is taken in here, answered without waiting for
    // credit, and only what is left for omniORB counts.
    if (in_recv_ == 0 && link_->unread()) {
      take_in(lock);
      collect_locked();
      if (!ready_.empty() || ended_) return true;
      flush(lock, kPoll);
    }
  }
  return link_->readable();  // more than take_in took, the close, or an error
}

bool OtpConnection::wait_readable(clan::Deadline deadline) {
  // Feed the engine until it has something for omniORB (control packets
  // such as acks are consumed here without waking anybody).
  std::unique_lock lock(mu_);
  for (;;) {
    collect_locked();
    if (!ready_.empty() || ended_) return true;
    if (reading_) {  // another thread feeds the engine: look at what it fed
      if (!wait_turn(lock, deadline)) return false;
      continue;
    }
    reading_ = true;
    lock.unlock();
    auto r = link_->receive(rxbuf_.data(), rxbuf_.size(), deadline);
    lock.lock();
    end_turn();  // mu_ is held until the engine has the datagram
    if (!r) return r.error() != Errc::kTimeout;  // a closed link is readable
    engine_.on_packet(rxbuf_.data(), r.value(), clan::now_ns());
    flush(lock);
  }
}

void OtpConnection::Shutdown() {
  {
    std::lock_guard lock(mu_);
    engine_.close(clan::now_ns());
    if (!ended_) log_end("shut down");
    ended_ = true;
  }
  link_->close();
  notify_monitor();  // a closed connection looks readable
}

}  // namespace clanorb
