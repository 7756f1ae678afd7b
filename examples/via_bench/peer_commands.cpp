// The peer's side of each measurement: echo a ping-pong, consume a stream,
// serve the completion-queue clients.
#include <chrono>

#include "via_bench/peer.hpp"

namespace via_bench {
namespace {

using Clock = std::chrono::steady_clock;

clan::Deadline a_minute() { return clan::Deadline::after(std::chrono::seconds(60)); }

int32_t errc_status(int32_t base, clan::Errc e) { return base + static_cast<int32_t>(e); }

}  // namespace

// Waits, echoes, then reposts and reaps.
int32_t Peer::via_latency(const Command& c) {
  if (!set_mode(main_.vi(), c.mode)) return 1;
  for (uint64_t i = 0; i < c.count; ++i) {
    VIP_DESCRIPTOR* d = nullptr;
    VIP_RETURN e = VipRecvWait(main_.vi(), kWaitMs, &d);
    if (e != VIP_SUCCESS) return 100 + e;
    const uint32_t len = d->CS.Length;
    if (VipPostSend(main_.vi(), main_.main_send(0, len), main_.lmh()) != VIP_SUCCESS) return 2;
    if (VipPostRecv(main_.vi(), main_.main_recv(main_.main_recv_slot(d)), main_.lmh()) != VIP_SUCCESS) return 3;
    VIP_DESCRIPTOR* sd = nullptr;
    e = VipSendWait(main_.vi(), kWaitMs, &sd);
    if (e != VIP_SUCCESS) return 200 + e;
  }
  return 0;
}

int32_t Peer::dmq_latency(const Command& c) {
  const clan::Deadline dl = a_minute();
  for (uint64_t i = 0; i < c.count; ++i) {
    auto m = rx_->receive(dl);
    if (!m) return errc_status(300, m.error());
    const size_t len = m->size;
    if (clan::Errc e = tx_->send(zero_.data(), len, dl, clan::Transfer::kPio); e != clan::Errc::kOk) {
      return errc_status(400, e);
    }
    if (rx_->release() != clan::Errc::kOk) return 4;
  }
  return 0;
}

// Checks each message's length and sequence number and reposts its buffer:
// the reposted descriptor is the sender's credit.
int32_t Peer::via_stream(const Command& c, Reply& r) {
  if (!set_mode(main_.vi(), c.mode)) return 1;
  for (uint64_t i = 0; i < c.count; ++i) {
    VIP_DESCRIPTOR* d = nullptr;
    VIP_RETURN e = VipRecvWait(main_.vi(), kWaitMs, &d);
    if (e != VIP_SUCCESS) return 100 + e;
    const size_t slot = main_.main_recv_slot(d);
    if (d->CS.Length != c.size || !seq_ok(main_.rx_buf(slot), c.size, i)) return 5;
    if (VipPostRecv(main_.vi(), main_.main_recv(slot), main_.lmh()) != VIP_SUCCESS) return 3;
  }
  r.count = c.count;
  r.end_ns = Clock::now().time_since_epoch().count();
  return 0;
}

int32_t Peer::dmq_stream(const Command& c, Reply& r) {
  const clan::Deadline dl = a_minute();
  for (uint64_t i = 0; i < c.count; ++i) {
    auto m = rx_->receive(dl);
    if (!m) return errc_status(300, m.error());
    if (m->size != c.size || !seq_ok(m->data, c.size, i)) return 5;
    if (rx_->release() != clan::Errc::kOk) return 4;
  }
  r.count = c.count;
  r.end_ns = Clock::now().time_since_epoch().count();
  return 0;
}

// One receive CQ over all kCqMax VIs: each request is echoed on its own VI
// (after reaping that VI's previous echo) until a message carries the stop
// marker as immediate data.
int32_t Peer::cq_server(const Command& c, Reply& r) {
  for (size_t i = 0; i < static_cast<size_t>(c.count); ++i) {
    if (!set_mode(cq_.cq_vi(i), c.mode)) return 1;
  }
  std::vector<bool> pending(kCqMax, false);
  if (!ctl_.put(r)) return kChannelLost;  // ready
  uint64_t echoed = 0;
  for (;;) {
    VIP_VI_HANDLE vi = nullptr;
    VIP_BOOLEAN is_recv = VIP_FALSE;
    VIP_RETURN e = VipCQWait(cq_.cq(), kWaitMs, &vi, &is_recv);
    if (e != VIP_SUCCESS) return 500 + e;
    if (!is_recv) continue;
    VIP_DESCRIPTOR* d = nullptr;
    e = VipRecvDone(vi, &d);
    if (e != VIP_SUCCESS) return 600 + e;
    const bool stop = (d->CS.Status & VIP_STATUS_IMMEDIATE) && d->CS.ImmediateData == kStopMarker;
    if (!stop) {
      if (int32_t s = cq_echo(vi, d, pending)) return s;
      ++echoed;
    }
    if (VipPostRecv(vi, cq_.cq_recv(cq_.cq_recv_slot(d)), cq_.lmh()) != VIP_SUCCESS) return 7;
    if (stop) break;
  }
  r.count = echoed;
  return cq_drain(pending);
}

int32_t Peer::cq_echo(VIP_VI_HANDLE vi, const VIP_DESCRIPTOR* d, std::vector<bool>& pending) {
  const size_t idx = cq_.cq_index(vi);
  if (pending[idx]) {
    VIP_DESCRIPTOR* sd = nullptr;
    VIP_RETURN e = VipSendWait(vi, kWaitMs, &sd);
    if (e != VIP_SUCCESS) return 700 + e;
  }
  if (VipPostSend(vi, cq_.cq_send(idx, d->CS.Length), cq_.lmh()) != VIP_SUCCESS) return 6;
  pending[idx] = true;
  return 0;
}

int32_t Peer::cq_drain(const std::vector<bool>& pending) {
  for (size_t i = 0; i < kCqMax; ++i) {
    if (!pending[i]) continue;
    VIP_DESCRIPTOR* sd = nullptr;
    if (VipSendWait(cq_.cq_vi(i), kWaitMs, &sd) != VIP_SUCCESS) return 8;
  }
  return 0;
}

}  // namespace via_bench
