// Paper 001 Fig. 6 on the measuring side: VIA and raw DMQ streams.
#include "bench/session.hpp"
#include "clan_emul/dma_stream.hpp"
#include "via_bench/driver.hpp"

namespace via_bench {

using bench::die;
using Clock = std::chrono::steady_clock;

// kSendSlots sends in flight at most; sends beyond the receiver's posted
// descriptors wait in the VI (DeferSends).
BwPoint Driver::via_bw(uint32_t mode, uint64_t size, uint64_t count) {
  if (!set_mode(main_.vi(), mode)) die("VipClanSetViAttributes failed");
  ctl_.command({Op::kViaBw, mode, size, count}, "via bandwidth");
  const uint32_t len = static_cast<uint32_t>(size);
  const bench::ActivityMeter meter;
  const auto t0 = Clock::now();
  uint64_t reaped = 0;
  auto reap = [&] {
    VIP_DESCRIPTOR* sd = nullptr;
    VIP_RETURN e = VipSendWait(main_.vi(), kWaitMs, &sd);
    if (e != VIP_SUCCESS) die("VipSendWait (stream): " + std::to_string(e));
    ++reaped;
  };
  for (uint64_t m = 0; m < count; ++m) {
    if (m >= kSendSlots) reap();
    const size_t k = m % kSendSlots;
    put_seq(main_.send_buf(k), size, m);
    VIP_RETURN e = VipPostSend(main_.vi(), main_.main_send(k, len), main_.lmh());
    if (e != VIP_SUCCESS) die("VipPostSend (stream): " + std::to_string(e));
  }
  while (reaped < count) reap();
  return bw_point("via bandwidth", size, count, t0, meter.done());
}

BwPoint Driver::dmq_bw(bool dma, uint64_t size, uint64_t count) {
  ctl_.command({Op::kDmqBw, dma ? 1u : 0u, size, count}, "dmq bandwidth");
  const clan::Deadline dl = clan::Deadline::after(std::chrono::seconds(60));
  const bench::ActivityMeter meter;
  const auto t0 = Clock::now();
  if (dma) {
    dmq_dma_stream(size, count, dl);
  } else {
    dmq_pio_stream(size, count, dl);
  }
  return bw_point("dmq bandwidth", size, count, t0, meter.done());
}

void Driver::dmq_pio_stream(uint64_t size, uint64_t count, clan::Deadline dl) {
  unsigned char* buf = main_.send_buf(0);
  for (uint64_t m = 0; m < count; ++m) {
    put_seq(buf, size, m);
    if (clan::Errc e = tx_->send(buf, size, dl, clan::Transfer::kPio); e != clan::Errc::kOk) {
      die(std::string("DMQ PIO send: ") + clan::to_string(e));
    }
  }
}

// Asynchronous DMA from kSendSlots source buffers: a buffer is reused once
// its transfer is done.
void Driver::dmq_dma_stream(uint64_t size, uint64_t count, clan::Deadline dl) {
  std::vector<uint64_t> tickets(kSendSlots, 0);
  clan::DmaStream& dmas = tx_->dma();
  uint64_t last = 0;
  for (uint64_t m = 0; m < count; ++m) {
    const size_t b = m % kSendSlots;
    if (tickets[b] != 0 && !dmas.done(tickets[b])) {
      if (clan::Errc e = dmas.wait(tickets[b], dl); e != clan::Errc::kOk) {
        die(std::string("DMA wait: ") + clan::to_string(e));
      }
    }
    put_seq(main_.send_buf(b), size, m);
    auto t = tx_->send_dma_async(main_.send_buf(b), size, dl);
    if (!t) die(std::string("DMQ DMA send: ") + clan::to_string(t.error()));
    tickets[b] = last = t.value();
  }
  if (last) {
    if (clan::Errc e = dmas.wait(last, dl); e != clan::Errc::kOk) die(std::string("DMA wait: ") + clan::to_string(e));
  }
}

// A stream that A started at t0 and B has consumed: B's report as a point.
BwPoint Driver::bw_point(const char* what, uint64_t size, uint64_t count, Clock::time_point t0,
                         const bench::Activity& mine) {
  const Reply r = ctl_.await(what);
  if (r.count != count) die(std::string(what) + ": message count mismatch");
  BwPoint p;
  p.size = size;
  p.messages = count;
  // Both processes read the same steady_clock (CLOCK_MONOTONIC).
  p.seconds = static_cast<double>(r.end_ns - t0.time_since_epoch().count()) * 1e-9;
  p.act = {mine, r.act, count};
  return p;
}

}  // namespace via_bench
