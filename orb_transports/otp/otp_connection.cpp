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
// Chunks from this size on are sent with the copy-out trick (paper 002 sect.
// 4.4): it costs one extra small packet, which pays only for large chunks.
constexpr size_t kInPlaceMin = 4096;

// Around the moment recovery traffic is due after a loss (the engine's
// recovery_due(): our retransmission timer, or the peer's NACK), Recv polls
// instead of sleeping: a sleeping thread wakes tens of microseconds late
// (timer slack, scheduling), and after a loss that delay adds to the call
// twice, once on each side. Not while this thread's waits find the host
// oversubscribed (spin_wait.hpp): then the poll takes the CPU the peer needs.
constexpr uint64_t kPollBeforeNs = 150'000;
constexpr uint64_t kPollAfterNs = 150'000;

// The most a one-way may gather before omniORB sees it: what omniORB
// accepts as a message (-ORBgiopMaxMsgSize), plus fragment headers.
size_t max_oneway_bytes() {
  const size_t limit = orbParameters::giopMaxMsgSize;
  return limit + limit / 8;
}

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

// While a thread is in Recv it runs the engine's timers itself, each after
// reading what the link has: the timer service leaves them alone (see
// on_timer_due). On the way out (mu_ still held) the service is asked for
// the timers this thread leaves behind.
class OtpConnection::InRecv {
 public:
  explicit InRecv(OtpConnection& c) : c_(c) { ++c_.in_recv_; }
  ~InRecv() {
    --c_.in_recv_;
    c_.schedule_timer_locked();
    c_.retry_sends_later();
  }
  InRecv(const InRecv&) = delete;
  InRecv& operator=(const InRecv&) = delete;

 private:
  OtpConnection& c_;
};

int OtpConnection::Recv(void* buf, size_t sz, const omni_time_t& deadline) {
  uint64_t now = 0;  // read with the deadline, else when first needed, then after each datagram
  const clan::Deadline d = to_deadline(deadline, &now);
  std::unique_lock lock(mu_);
  const InRecv in_recv(*this);
  for (;;) {
    collect_locked();
    if (!ready_.empty()) return static_cast<int>(copy_ready(static_cast<std::byte*>(buf), sz));
    if (ended_) return -1;
    if (now == 0) now = clan::now_ns();
    if (auto t = engine_.next_timer(); t && *t <= now) engine_.on_timer(now);
    flush(lock);  // never waits long for credit
    const clan::Deadline until = recv_wait_until(d, now);
    if (reading_) {
      // Another thread is between the link and the engine (take_in stops
      // after one datagram now that we are in): wait, then take what it fed.
      if (!wait_turn(lock, d)) return 0;
      now = clan::now_ns();
      continue;
    }
    if (const std::optional<int> out = receive_into_engine(lock, d, until, now)) return *out;
  }
}

size_t OtpConnection::copy_ready(std::byte* out, size_t sz) {
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
  return got;
}

clan::Deadline OtpConnection::recv_wait_until(clan::Deadline caller, uint64_t now) {
  clan::Deadline until = caller;
  auto sooner = [&](uint64_t at_ns) {
    const auto at = clan::Deadline(clan::Clock::time_point(std::chrono::nanoseconds(at_ns)));
    if (until.is_never() || at.when() < until.when()) until = at;
  };
  if (auto t = engine_.next_timer()) sooner(*t);
  // While packets wait for credit, in short slices, so that they leave as
  // soon as the credit (taken off the ring by the link) is there.
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
  return until;
}

std::optional<int> OtpConnection::receive_into_engine(std::unique_lock<std::mutex>& lk, clan::Deadline caller,
                                                      clan::Deadline until, uint64_t& now) {
  const bool poll = now < poll_until_ && !clan::spin_history.oversubscribed();
  reading_ = true;
  lk.unlock();
  auto r = link_->receive(rxbuf_.data(), rxbuf_.size(), poll ? clan::Deadline::already_expired() : until);
  lk.lock();
  end_turn();  // mu_ is held until the engine has the datagram
  now = clan::now_ns();
  if (r) {
    engine_.on_packet(rxbuf_.data(), r.value(), now);
    // A stream of datagrams with nothing for omniORB yet (a long one-way)
    // must not hold the caller past its deadline.
    if (!caller.is_never() && clan::Clock::time_point(std::chrono::nanoseconds(now)) >= caller.when()) {
      collect_locked();
      if (ready_.empty() && !ended_) return 0;
    }
    return std::nullopt;
  }
  if (r.error() == Errc::kTimeout) return caller.expired() ? std::optional<int>(0) : std::nullopt;
  // The link ended (closed, peer dead, corrupt): a hard error (sect. 4.2.1 iii).
  if (!ended_) log_end(clan::to_string(r.error()));
  ended_ = true;  // logged; fail() delivers kBad
  engine_.fail(now);
  collect_locked();
  return ready_.empty() ? std::optional<int>(-1) : std::nullopt;
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
      flush(lock, clan::Deadline::already_expired());
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
