#include "orb_transports/otp/otp_connection.hpp"

#include <algorithm>
#include <cstring>

#include "orb_transports/common/omni_time.hpp"

OMNI_USING_NAMESPACE(omni)

namespace clanorb {

using clan::Errc;

namespace {
// How long Recv, Peek and timers let a send wait for link credit: long
// enough for the link to probe the peer (it probes a stall after 1 ms, which
// is what recovers a lost credit ack), short enough not to hold up receiving.
// The connection's lock is not held meanwhile, and the link keeps reading.
clan::Deadline credit_wait() { return clan::Deadline::after(std::chrono::microseconds(2500)); }

otp::EngineConfig engine_config(size_t link_mtu) {
  otp::EngineConfig c;
  c.mtu = link_mtu;
  c.rto_ns = uint64_t{fabric_options().otp_rto_us} * 1000;
  // Give up on a live but silent peer after about 5 s, whatever the RTO: on
  // an oversubscribed host a busy peer can go unscheduled for far longer than
  // 50 RTOs. A dead peer is reported sooner by the connection manager.
  c.max_retries = static_cast<int>(std::max<uint64_t>(50, 5'000'000'000 / c.rto_ns));
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
      engine_(role, engine_config(link_->mtu())),
      rxbuf_(link_->mtu()) {}

OtpConnection::~OtpConnection() {
  OtpTimerService::instance().forget(this);
  detach_from_endpoint();
}

void OtpConnection::flush(std::unique_lock<std::mutex>& lk, clan::Deadline deadline) {
  otp::Engine::Packet p;
  while (engine_.next_packet(p)) outq_.push_back(std::move(p.bytes));
  // The service only needs a wake-up no later than the engine's next timer:
  // a wake-up that comes early finds nothing due and reschedules (calling
  // on_timer early is harmless). So only a timer that moved earlier costs a
  // call into the service; during traffic, timers only move later.
  const auto t = engine_.next_timer();
  if (t && (scheduled_ == 0 || *t < scheduled_)) {
    scheduled_ = *t;
    OtpTimerService::instance().schedule(this, *t);
  }
  if (sending_) return;  // the thread draining the queue sends these too
  sending_ = true;
  while (!outq_.empty()) {
    std::vector<std::byte> pkt = std::move(outq_.front());
    outq_.pop_front();
    lk.unlock();
    const Errc e = link_->send(pkt.data(), pkt.size(), deadline);
    lk.lock();
    if (e == Errc::kTimeout || e == Errc::kWouldBlock) {  // no credit yet: keep it, in order
      outq_.push_front(std::move(pkt));
      break;
    }
    // Other errors: the packet is lost like any other (the protocol recovers)
    // or the link is gone (Recv sees it).
  }
  sending_ = false;
}

bool OtpConnection::collect_locked() {
  otp::Engine::Received r;
  while (engine_.next_received(r)) {
    switch (r.what) {
      case otp::Delivery::kData:
        if (r.exactly_once) {
          ready_.push_back(std::move(r.data));
        } else {
          // A one-way reaches omniORB only whole (see the header comment).
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
        ended_ = true;
        break;
    }
  }
  return !ended_;
}

int OtpConnection::send_to_engine(const std::byte* data, size_t len, bool complete,
                                  bool exactly_once, clan::Deadline deadline) {
  std::unique_lock lock(mu_);
  if (ended_) return -1;
  otp::Errc e = engine_.send(data, len, complete, exactly_once, clan::now_ns());
  flush(lock, deadline);
  return e == otp::Errc::kOk ? 0 : -1;
}

int OtpConnection::Send(void* buf, size_t sz, const omni_time_t& deadline) {
  const auto* data = static_cast<const std::byte*>(buf);
  const GiopFramer::Piece p = framer_.next(data, sz);
  if (!p.valid) {
    omniORB::logs(10, "giop:otp: outgoing bytes are not GIOP; closing the connection");
    return -1;
  }
  const clan::Deadline d = to_deadline(deadline);
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
    if (send_to_engine(head.data(), head.size(), false, p.expects_reply, d) < 0) return -1;
  }
  if (send_to_engine(data, p.len, p.ends_call, p.expects_reply, d) < 0) return -1;
  return static_cast<int>(p.len);
}

int OtpConnection::Recv(void* buf, size_t sz, const omni_time_t& deadline) {
  const clan::Deadline d = to_deadline(deadline);
  auto* out = static_cast<std::byte*>(buf);
  std::unique_lock lock(mu_);
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
          ready_.pop_front();
          ready_off_ = 0;
        }
      }
      return static_cast<int>(got);
    }
    if (ended_) return -1;
    const uint64_t now = clan::now_ns();
    if (auto t = engine_.next_timer(); t && *t <= now) engine_.on_timer(now);
    flush(lock, credit_wait());  // never wait long for credit here
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
    lock.unlock();
    auto r = link_->receive(rxbuf_.data(), rxbuf_.size(), until);
    lock.lock();
    if (r) {
      engine_.on_packet(rxbuf_.data(), r.value(), clan::now_ns());
    } else if (r.error() == Errc::kTimeout) {
      if (d.expired()) return 0;
    } else {
      // The link ended (closed, peer dead, corrupt): a hard error (sect. 4.2.1 iii).
      engine_.fail(clan::now_ns());
      collect_locked();
      if (ready_.empty()) return -1;
    }
  }
}

void OtpConnection::on_timer_due() {
  std::unique_lock lock(mu_);
  scheduled_ = 0;  // the service dropped us before calling
  const uint64_t now = clan::now_ns();
  if (auto t = engine_.next_timer(); t && *t <= now) engine_.on_timer(now);
  flush(lock, credit_wait());
  // Packets still waiting for credit: come back soon (nobody may be in Recv).
  if (!outq_.empty() && scheduled_ == 0) {
    scheduled_ = now + 1'000'000;
    OtpTimerService::instance().schedule(this, scheduled_);
  }
}

bool OtpConnection::readable() {
  {
    std::lock_guard lock(mu_);
    if (!ready_.empty() || ended_) return true;
  }
  return link_->readable();
}

bool OtpConnection::wait_readable(clan::Deadline deadline) {
  // Feed the engine until it has something for omniORB (control packets
  // such as acks are consumed here without waking anybody).
  for (;;) {
    {
      std::lock_guard lock(mu_);
      collect_locked();
      if (!ready_.empty() || ended_) return true;
    }
    auto r = link_->receive(rxbuf_.data(), rxbuf_.size(), deadline);
    if (!r) return r.error() != Errc::kTimeout;  // a closed link is readable
    std::unique_lock lock(mu_);
    engine_.on_packet(rxbuf_.data(), r.value(), clan::now_ns());
    flush(lock, credit_wait());
  }
}

void OtpConnection::Shutdown() {
  {
    std::lock_guard lock(mu_);
    engine_.close(clan::now_ns());
    ended_ = true;
  }
  link_->close();
  notify_monitor();  // a closed connection looks readable
}

}  // namespace clanorb
