// Paper 001 Fig. 7 on the measuring side: the completion-queue client.
#include "bench/session.hpp"
#include "via_bench/driver.hpp"

namespace via_bench {

using bench::die;
using Clock = std::chrono::steady_clock;

// One outstanding request on each of the first n connections; echoes are
// taken from this side's own receive CQ and the request re-sent on the same
// connection. Counted after a warm-up tenth, for `secs`.
class Driver::CqClient {
 public:
  CqClient(ViplSide& side, size_t n) : side_(side), n_(n), pending_(kCqMax, false) {}

  // Sends on connection i, after reaping its previous send; a non-zero
  // `imm` goes as immediate data.
  void send(size_t i, uint32_t imm) {
    if (pending_[i]) {
      VIP_DESCRIPTOR* sd = nullptr;
      VIP_RETURN e = VipSendWait(side_.cq_vi(i), kWaitMs, &sd);
      if (e != VIP_SUCCESS) die("VipSendWait (cq): " + std::to_string(e));
    }
    VIP_DESCRIPTOR* d = side_.cq_send(i, kCqMessage);
    if (imm) {
      d->CS.Control = VIP_CONTROL_IMMEDIATE;
      d->CS.ImmediateData = imm;
    }
    VIP_RETURN e = VipPostSend(side_.cq_vi(i), d, side_.lmh());
    if (e != VIP_SUCCESS) die("VipPostSend (cq): " + std::to_string(e));
    pending_[i] = true;
  }

  // Runs the requests until `secs` after the warm-up, then lets the
  // outstanding ones come back. Returns the echoes counted.
  uint64_t run(double secs) {
    for (size_t i = 0; i < n_; ++i) send(i, 0);
    size_t outstanding = n_;
    const auto t0 = Clock::now();
    t_warm_ = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(secs / 10));
    t_end_ = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(secs * 1.1));
    uint64_t counted = 0;
    while (outstanding > 0) {
      VIP_VI_HANDLE vi = next_echo();
      if (!vi) continue;
      if (counting_ && !stopping_) ++counted;
      if ((++checks_ & 15) == 0 || n_ < 16) check_clock();
      if (stopping_) {
        --outstanding;
      } else {
        send(side_.cq_index(vi), 0);
      }
    }
    return counted;
  }

  void drain() {
    for (size_t i = 0; i < n_; ++i) {
      VIP_DESCRIPTOR* sd = nullptr;
      if (pending_[i] && VipSendWait(side_.cq_vi(i), kWaitMs, &sd) != VIP_SUCCESS) die("VipSendWait (cq drain)");
    }
  }

  double seconds() const { return std::chrono::duration<double>(t_stop_ - t_count_).count(); }

 private:
  // The VI of the next echo, its receive buffer reposted; nullptr for a
  // send completion.
  VIP_VI_HANDLE next_echo() {
    VIP_VI_HANDLE vi = nullptr;
    VIP_BOOLEAN is_recv = VIP_FALSE;
    VIP_RETURN e = VipCQWait(side_.cq(), kWaitMs, &vi, &is_recv);
    if (e != VIP_SUCCESS) die("VipCQWait (client): " + std::to_string(e));
    if (!is_recv) return nullptr;
    VIP_DESCRIPTOR* d = nullptr;
    e = VipRecvDone(vi, &d);
    if (e != VIP_SUCCESS) die("VipRecvDone (client): " + std::to_string(e));
    if (VipPostRecv(vi, side_.cq_recv(side_.cq_recv_slot(d)), side_.lmh()) != VIP_SUCCESS) {
      die("VipPostRecv (client)");
    }
    return vi;
  }

  void check_clock() {
    const auto now = Clock::now();
    if (!counting_ && now >= t_warm_) {
      counting_ = true;
      t_count_ = now;
    } else if (counting_ && !stopping_ && now >= t_end_) {
      stopping_ = true;
      t_stop_ = now;
    }
  }

  ViplSide& side_;
  const size_t n_;
  std::vector<bool> pending_;
  Clock::time_point t_warm_{}, t_end_{}, t_count_{}, t_stop_{};
  bool counting_ = false, stopping_ = false;
  uint64_t checks_ = 0;
};

CqPoint Driver::cq(uint32_t mode, int n, double secs) {
  const size_t nc = static_cast<size_t>(n);
  for (size_t i = 0; i < nc; ++i) {
    if (!set_mode(cq_.cq_vi(i), mode)) die("VipClanSetViAttributes failed");
  }
  ctl_.command({Op::kCq, mode, kCqMessage, static_cast<uint64_t>(n)}, "cq");
  ctl_.await("cq setup");
  CqClient client(cq_, nc);
  CqPoint p;
  p.conns = n;
  p.messages = client.run(secs);
  client.send(0, kStopMarker);
  p.server_echoes = ctl_.await("cq").count;
  client.drain();
  p.seconds = client.seconds();
  return p;
}

}  // namespace via_bench
