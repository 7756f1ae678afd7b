#include "via_bench/driver.hpp"

#include "bench/pinning.hpp"
#include "bench/session.hpp"

namespace via_bench {

using bench::die;
using Clock = std::chrono::steady_clock;

void Driver::open_raw_dmq() {
  auto nic = clan::Nic::open(bench::nic_config(setup_.node_a + "-raw"));
  if (!nic) die(std::string("Nic::open: ") + clan::to_string(nic.error()));
  nic_ = std::move(nic.value());
  spin_ns_ = nic_->spin_budget().count();
  auto tx = clan::DmqSender::create(*nic_, dmq_config());
  auto rx = clan::DmqReceiver::create(*nic_, dmq_config());
  if (!tx || !rx) die("DMQ create failed");
  tx_ = std::move(tx.value());
  rx_ = std::move(rx.value());
  (void)tx_->dma();  // starts the NIC's DMA engine thread now, before any pinning
}

void Driver::exchange_cookies() {
  const Hello theirs = ctl_.receive<Hello>("hello");
  if (theirs.status != 0) die("peer setup failed");
  ctl_.put(Hello{tx_->cookie(), rx_->cookie(), 0}, "hello");
  if (tx_->attach(theirs.rx) != clan::Errc::kOk || rx_->attach(theirs.tx) != clan::Errc::kOk) {
    die("DMQ attach failed");
  }
}

// In the order the peer accepts: the CQ VIs, then the main VI.
void Driver::connect() {
  for (size_t i = 0; i <= kCqMax; ++i) {
    const bool m = i == kCqMax;
    if (!(m ? setup_.parts.main : setup_.parts.cq)) continue;
    Address local("", "a"), remote(setup_.node_b + (m ? "m" : "q"), disc_of(i));
    VIP_VI_ATTRIBUTES ra{};
    VIP_RETURN e = VipConnectRequest(m ? main_.vi() : cq_.cq_vi(i), local.get(), remote.get(), 20000, &ra);
    if (e != VIP_SUCCESS) die("VipConnectRequest " + disc_of(i) + ": " + std::to_string(e));
  }
}

void Driver::set_up() {
  if (setup_.parts.main) {
    if (int e = main_.open_main(setup_.node_a + "m")) die("VIPL setup failed at step " + std::to_string(e));
  }
  if (setup_.parts.cq) {
    if (int e = cq_.open_cq(setup_.node_a + "q")) die("VIPL setup (CQ NIC) failed at step " + std::to_string(e));
  }
  open_raw_dmq();
  exchange_cookies();
  const auto t0 = Clock::now();
  connect();
  const Reply ready = ctl_.receive<Reply>("acceptance of the connections", std::chrono::seconds(60));
  if (ready.status != 0) die("peer could not accept the connections");
  connect_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (setup_.pin) {
    const int cpu = bench::nth_allowed_cpu(0);
    pinned_ = ready.act.cpu_first >= 0 && cpu >= 0 && cpu != ready.act.cpu_first && bench::pin_to_cpu(cpu);
  }
  if (setup_.parts.main && !set_mode(main_.vi(), VIP_CLAN_TRANSFER_AUTO)) die("VipClanSetViAttributes failed");
}

void Driver::quit() {
  Command c{};
  c.op = Op::kQuit;
  ctl_.send(c, "quit");
}

}  // namespace via_bench
