#include "via_bench/peer.hpp"

#include <chrono>

#include "bench/pinning.hpp"
#include "bench/session.hpp"

namespace via_bench {
namespace {

using std::chrono::seconds;

}  // namespace

Peer::Peer(const Setup& setup, bench::Channel ctl, const bench::StartSignal& started)
    : setup_(setup), ctl_(std::move(ctl)), started_(started), zero_(kMaxMessage) {}

int Peer::run() {
  if (int e = set_up()) return e;
  const int code = serve();
  cq_.close();
  main_.close();
  return code;
}

int Peer::open_raw_dmq() {
  auto nic = clan::Nic::open(bench::nic_config(setup_.node_b + "-raw"));
  if (!nic) return 30;
  nic_ = std::move(nic.value());
  auto tx = clan::DmqSender::create(*nic_, dmq_config());
  auto rx = clan::DmqReceiver::create(*nic_, dmq_config());
  if (!tx || !rx) return 31;
  tx_ = std::move(tx.value());
  rx_ = std::move(rx.value());
  return 0;
}

// Every discriminator of the Setup's parts: with timeout 0, starts
// listening (before A asks); then, with `accept`, takes A's request.
int Peer::listen(VIP_ULONG timeout_ms, bool accept) {
  for (size_t i = 0; i <= kCqMax; ++i) {
    const bool m = i == kCqMax;
    if (!(m ? setup_.parts.main : setup_.parts.cq)) continue;
    ViplSide& side = m ? main_ : cq_;
    Address local(setup_.node_b + (m ? "m" : "q"), disc_of(i)), out("", "");
    VIP_VI_ATTRIBUTES ra{};
    VIP_CONN_HANDLE c = nullptr;
    const VIP_RETURN e = VipConnectWait(side.nic(), local.get(), timeout_ms, out.get(), &ra, &c);
    if (!accept) {
      if (e != VIP_TIMEOUT) return 32;
      continue;
    }
    if (e != VIP_SUCCESS) return 36;
    if (VipConnectAccept(c, m ? side.vi() : side.cq_vi(i)) != VIP_SUCCESS) return 37;
  }
  return 0;
}

int Peer::set_up() {
  if (setup_.parts.main) {
    if (int e = main_.open_main(setup_.node_b + "m")) return 10 + e;
  }
  if (setup_.parts.cq) {
    if (int e = cq_.open_cq(setup_.node_b + "q")) return 10 + e;
  }
  if (int e = open_raw_dmq()) return e;
  if (int e = listen(0, false)) return e;
  Hello mine{tx_->cookie(), rx_->cookie(), 0};
  if (!ctl_.put(mine)) return 33;
  Hello theirs{};
  if (!ctl_.get(theirs, seconds(30)) || theirs.status != 0) return 34;
  if (tx_->attach(theirs.rx) != clan::Errc::kOk || rx_->attach(theirs.tx) != clan::Errc::kOk) return 35;
  if (int e = listen(20000, true)) return e;
  // Pinned after the connections: the DMA engine threads started with them
  // stay free to run on either CPU.
  Reply ready{};
  if (setup_.pin) {
    const int cpu = bench::nth_allowed_cpu(1);
    ready.act.cpu_first = cpu >= 0 && bench::pin_to_cpu(cpu) ? cpu : -1;
  }
  return ctl_.put(ready) ? 0 : 38;
}

int Peer::serve() {
  for (;;) {
    Command c{};
    if (!ctl_.get(c, seconds(300))) return 40;
    if (c.op == Op::kQuit) return 0;
    Reply r{};
    const bench::ActivityMeter meter;
    started_.started();
    if (const int32_t status = run_command(c, r)) {
      if (status == kChannelLost) return 41;
      r.status = status;
      ctl_.put(r);
      return 50;
    }
    r.act = meter.done();
    if (!ctl_.put(r)) return 42;
  }
}

int32_t Peer::run_command(const Command& c, Reply& r) {
  switch (c.op) {
    case Op::kViaLat:
      r.count = c.count;
      return via_latency(c);
    case Op::kDmqLat:
      r.count = c.count;
      return dmq_latency(c);
    case Op::kViaBw:
      return via_stream(c, r);
    case Op::kDmqBw:
      return dmq_stream(c, r);
    case Op::kCq:
      return cq_server(c, r);
    case Op::kQuit:
      break;
  }
  return 9;
}

}  // namespace via_bench
