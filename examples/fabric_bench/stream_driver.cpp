// The measuring side of bench_fabric_stream: writes every message's payload
// and sends it, then checks the peer's checksum.
#include <algorithm>
#include <cstring>
#include <string>

#include "bench/session.hpp"
#include "clan_emul/dma_stream.hpp"
#include "clan_emul/futex.hpp"
#include "fabric_bench/stream.hpp"
#include "fabric_bench/words.hpp"

namespace fabric_bench {

using Clock = std::chrono::steady_clock;
using clan::Errc;
using std::chrono::seconds;

StreamDriver::StreamDriver(const bench::CommonOptions& o, StreamShared& sh, bench::Channel ctl)
    : o_(o), sh_(sh), ctl_(std::move(ctl), &sh.started) {}

void StreamDriver::setup() {
  open_nic(o_.spin_ns);
  auto tx = clan::DmqSender::create(*nic_, dmq_config());
  if (!tx) bench::die(std::string("DmqSender::create: ") + clan::to_string(tx.error()));
  tx_ = std::move(tx.value());
  // Start the DMA engine thread now, before this thread is pinned, so that
  // with --pin it is not confined to the sender's CPU.
  (void)tx_->dma();
  pinned_ = pin_side(o_, 0);

  const auto theirs = ctl_.receive<DmqHello>("hello");
  ctl_.put(DmqHello{tx_->cookie(), 0}, "hello");
  if (Errc e = tx_->attach(theirs.dmq); e != Errc::kOk) bench::die(std::string("attach: ") + clan::to_string(e));
  if (ctl_.receive<StreamReply>("ready").status != 0) bench::die("peer setup failed");
}

void StreamDriver::quit() { ctl_.send(StreamCommand{StreamOp::kQuit}, "quit"); }

BwPoint StreamDriver::stream(StreamOp op, uint64_t size, uint64_t count) {
  const char* name = stream_name(op);
  ctl_.command({op, 0, count, size}, std::string(name) + " stream");
  const clan::Deadline dl = clan::Deadline::after(seconds(60));
  const uint64_t w0 = clan::futex_wake_calls();
  const auto t0 = Clock::now();
  const uint64_t expect = op == StreamOp::kPio   ? send_pio(size, count, dl)
                          : op == StreamOp::kDma  ? send_dma(size, count, dl)
                          : op == StreamOp::kBare ? send_bare(size, count, dl)
                                                  : send_unix(size, count);
  const StreamReply r = ctl_.await(name);
  const auto t1 = Clock::now();
  if (r.checksum != expect || r.messages != count) {
    bench::die(std::string(name) + " stream: checksum mismatch (data lost or corrupted)");
  }
  BwPoint p;
  p.transport = name;
  p.size = size;
  p.messages = count;
  p.bytes = count * size;
  p.seconds = std::chrono::duration<double>(t1 - t0).count();
  p.peer_seconds = static_cast<double>(r.elapsed_ns) / 1e9;
  p.wakes = r.wakes + (clan::futex_wake_calls() - w0);
  return p;
}

uint64_t StreamDriver::send_pio(uint64_t size, uint64_t count, const clan::Deadline& dl) {
  uint64_t expect = 0;
  uint64_t* buf = buffer(0);
  for (uint64_t m = 0; m < count; ++m) {
    fill_payload(buf, size, m);
    expect += expected_sum(size, m);
    Errc e = tx_->send(buf, size, dl, clan::Transfer::kPio);
    if (e != Errc::kOk) bench::die(std::string("DMQ PIO send: ") + clan::to_string(e));
  }
  return expect;
}

// Several messages in flight over a few source buffers; a buffer is
// rewritten only once the DMA that read it has completed.
uint64_t StreamDriver::send_dma(uint64_t size, uint64_t count, const clan::Deadline& dl) {
  const size_t nbuf = std::clamp<size_t>(kRingBytes / (2 * (size + 8)), 4, kMaxBuffers);
  std::vector<uint64_t> tickets(nbuf, 0);
  clan::DmaStream& dma = tx_->dma();
  auto wait = [&](uint64_t ticket) {
    if (Errc e = dma.wait(ticket, dl); e != Errc::kOk) bench::die(std::string("DMA wait: ") + clan::to_string(e));
  };
  uint64_t expect = 0, last = 0;
  for (uint64_t m = 0; m < count; ++m) {
    const size_t b = m % nbuf;
    if (tickets[b] != 0 && !dma.done(tickets[b])) wait(tickets[b]);
    uint64_t* buf = buffer(b);
    fill_payload(buf, size, m);
    expect += expected_sum(size, m);
    auto t = tx_->send_dma_async(buf, size, dl);
    if (!t) bench::die(std::string("DMQ DMA send: ") + clan::to_string(t.error()));
    tickets[b] = last = t.value();
  }
  if (last) wait(last);
  if (dma.error() != Errc::kOk) bench::die(std::string("DMA error: ") + clan::to_string(dma.error()));
  return expect;
}

uint64_t StreamDriver::send_bare(uint64_t size, uint64_t count, const clan::Deadline& dl) {
  uint64_t expect = 0;
  uint64_t* buf = buffer(0);
  BareRing::Header* h = sh_.ring.header;
  const uint64_t need = 8 + clan::dmq::align8(size);
  for (uint64_t m = 0; m < count; ++m) {
    fill_payload(buf, size, m);
    expect += expected_sum(size, m);
    uint32_t n = 0;
    while (kRingBytes - (bare_write_ - h->read_i.v.load(std::memory_order_acquire)) < need) {
      clan::cpu_relax();
      if ((++n & 0xffff) == 0 && dl.expired()) bench::die("bare stream timed out");
    }
    std::byte* at = sh_.ring.data() + (bare_write_ & (kRingBytes - 1));
    std::memcpy(at, &size, 8);
    std::memcpy(at + 8, buf, size);
    bare_write_ += need;
    h->write_i.v.store(bare_write_, std::memory_order_release);
  }
  return expect;
}

uint64_t StreamDriver::send_unix(uint64_t size, uint64_t count) {
  uint64_t expect = 0;
  uint64_t* buf = buffer(0);
  for (uint64_t m = 0; m < count; ++m) {
    fill_payload(buf, size, m);
    expect += expected_sum(size, m);
    if (!write_all(sh_.unix_pair.fd[0], buf, size)) bench::die("unix stream: socket error");
  }
  return expect;
}

uint64_t* StreamDriver::buffer(size_t i) {
  if (buffers_.empty()) {
    for (size_t k = 0; k < kMaxBuffers; ++k) {
      buffers_.emplace_back(static_cast<uint64_t*>(std::aligned_alloc(64, kMaxMessage)));
      if (!buffers_.back()) bench::die("out of memory");
      std::memset(buffers_.back().get(), 0, kMaxMessage);
    }
  }
  return buffers_[i].get();
}

}  // namespace fabric_bench
