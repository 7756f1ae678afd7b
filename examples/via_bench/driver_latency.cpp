// Paper 001 Table 1 on the measuring side: VIA and raw DMQ ping-pongs.
#include "bench/session.hpp"
#include "via_bench/driver.hpp"

namespace via_bench {

using bench::die;
using Clock = std::chrono::steady_clock;

// Each sample is one whole iteration: post the send; while it is on its
// way, repost the previous echo's receive buffer and reap the send
// descriptor; wait for the echo. Paper 001 sect. 4 times what a message
// needs (posting the send, its transfer, completion at the receiver): the
// bookkeeping is done, and timed, but in the flight, as a VIA application
// would do it. Four receive buffers are posted, so the echo always finds one.
bench::BlockActivity Driver::via_lat(uint32_t mode, uint64_t size, uint64_t warm, uint64_t count,
                                     std::vector<uint64_t>& out) {
  if (!set_mode(main_.vi(), mode)) die("VipClanSetViAttributes failed");
  ctl_.command({Op::kViaLat, mode, size, warm + count}, "via latency");
  const bench::ActivityMeter meter;
  const uint32_t len = static_cast<uint32_t>(size);
  VIP_DESCRIPTOR* echoed = nullptr;  // the last echo's receive descriptor, reposted in the next flight
  for (uint64_t i = 0; i < warm + count; ++i) {
    const auto t0 = Clock::now();
    VIP_RETURN e = VipPostSend(main_.vi(), main_.main_send(0, len), main_.lmh());
    if (e != VIP_SUCCESS) die("VipPostSend: " + std::to_string(e));
    if (echoed && VipPostRecv(main_.vi(), main_.main_recv(main_.main_recv_slot(echoed)), main_.lmh()) != VIP_SUCCESS) {
      die("VipPostRecv");
    }
    VIP_DESCRIPTOR* sd = nullptr;
    e = VipSendWait(main_.vi(), kWaitMs, &sd);
    if (e != VIP_SUCCESS) die("VipSendWait: " + std::to_string(e));
    e = VipRecvWait(main_.vi(), kWaitMs, &echoed);
    if (e != VIP_SUCCESS) die("VipRecvWait: " + std::to_string(e));
    if (echoed->CS.Length != len) die("echo of the wrong length");
    const auto t1 = Clock::now();
    if (i >= warm) out.push_back(bench::ns_between(t0, t1));
  }
  if (echoed && VipPostRecv(main_.vi(), main_.main_recv(main_.main_recv_slot(echoed)), main_.lmh()) != VIP_SUCCESS) {
    die("VipPostRecv");
  }
  const bench::Activity mine = meter.done();
  return {mine, ctl_.await("via latency").act, warm + count};
}

bench::BlockActivity Driver::dmq_lat(uint64_t size, uint64_t warm, uint64_t count, std::vector<uint64_t>& out) {
  ctl_.command({Op::kDmqLat, 0, size, warm + count}, "dmq latency");
  const bench::ActivityMeter meter;
  const clan::Deadline dl = clan::Deadline::after(std::chrono::seconds(60));
  const unsigned char* buf = main_.send_buf(1);
  for (uint64_t i = 0; i < warm + count; ++i) {
    const auto t0 = Clock::now();
    if (clan::Errc e = tx_->send(buf, size, dl, clan::Transfer::kPio); e != clan::Errc::kOk) {
      die(std::string("DMQ send: ") + clan::to_string(e));
    }
    auto m = rx_->receive(dl);
    if (!m) die(std::string("DMQ receive: ") + clan::to_string(m.error()));
    if (m->size != size) die("DMQ echo of the wrong length");
    if (rx_->release() != clan::Errc::kOk) die("DMQ release failed");
    const auto t1 = Clock::now();
    if (i >= warm) out.push_back(bench::ns_between(t0, t1));
  }
  const bench::Activity mine = meter.done();
  return {mine, ctl_.await("dmq latency").act, warm + count};
}

}  // namespace via_bench
