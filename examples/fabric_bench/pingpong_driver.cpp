// The measuring side of bench_fabric_pingpong: times each round trip of a
// block, the peer echoing.
#include <string>

#include "bench/session.hpp"
#include "bench/stats.hpp"
#include "clan_emul/futex.hpp"
#include "fabric_bench/pingpong.hpp"
#include "fabric_bench/words.hpp"

namespace fabric_bench {

using Clock = std::chrono::steady_clock;
using clan::Errc;
using std::chrono::seconds;

PingDriver::PingDriver(const bench::CommonOptions& o, PingShared& sh, bench::Channel ctl)
    : o_(o), sh_(sh), ctl_(std::move(ctl)) {}

void PingDriver::setup() {
  open_nic(o_.spin_ns);
  auto region = nic_->export_region(4096);
  if (!region) bench::die(std::string("export_region: ") + clan::to_string(region.error()));
  region_ = std::move(region.value());
  auto tw = nic_->arm_tripwire(region_, 0);
  if (!tw) bench::die(std::string("arm_tripwire: ") + clan::to_string(tw.error()));
  tw_ = std::move(tw.value());
  pinned_ = pin_side(o_, 0);

  const auto theirs = ctl_.receive<PioHello>("hello");
  ctl_.put(PioHello{region_.cookie(), 0}, "hello");
  auto ap = nic_->import(theirs.pio);
  if (!ap) bench::die(std::string("import: ") + clan::to_string(ap.error()));
  ap_ = std::move(ap.value());
  if (ctl_.receive<PingReply>("ready").status != 0) bench::die("peer setup failed");
}

void PingDriver::quit() { ctl_.send(PingCommand{PingOp::kQuit}, "quit"); }

// Waits, spinning, for the peer's handshake: it is awake and spinning now.
void PingDriver::wait_pio_hello(const clan::Deadline& dl) {
  const uint64_t hello = kHello | ++pio_blocks_;
  for (uint32_t n = 0; load_word(region_.data()) != hello;) {
    clan::cpu_relax();
    if ((++n & 0xffff) == 0 && dl.expired()) bench::die("pio ping-pong: no handshake from the peer");
  }
}

uint64_t PingDriver::pio_block(uint64_t warm, uint64_t count, std::vector<uint64_t>& out) {
  ctl_.command({PingOp::kPio, 0, warm + count}, "pio");
  const clan::Deadline dl = clan::Deadline::after(seconds(60));
  const std::byte* in = region_.data();
  const uint64_t w0 = clan::futex_wake_calls();
  wait_pio_hello(dl);
  for (uint64_t i = 0; i < warm + count; ++i) {
    const uint64_t v = ++seq_pio_;
    const auto t0 = Clock::now();
    Errc e = ap_.write_word(0, v);
    if (e == Errc::kOk) e = tw_.wait([&] { return load_word(in) == v; }, dl);
    const auto t1 = Clock::now();
    if (e != Errc::kOk) bench::die(std::string("pio ping-pong: ") + clan::to_string(e));
    if (i >= warm) out.push_back(bench::ns_between(t0, t1));
  }
  const PingReply r = ctl_.await("pio");
  return r.wakes + (clan::futex_wake_calls() - w0);
}

void PingDriver::bare_block(uint64_t warm, uint64_t count, std::vector<uint64_t>& out) {
  ctl_.command({PingOp::kBare, 0, warm + count}, "bare");
  const clan::Deadline dl = clan::Deadline::after(seconds(60));
  PingShared::Page* p = sh_.bare;
  for (uint64_t i = 0; i < warm + count; ++i) {
    const uint64_t v = ++seq_bare_;
    const auto t0 = Clock::now();
    p->a_to_b.v.store(v, std::memory_order_release);
    uint32_t n = 0;
    while (p->b_to_a.v.load(std::memory_order_acquire) != v) {
      clan::cpu_relax();
      if ((++n & 0xffff) == 0 && dl.expired()) bench::die("bare ping-pong timed out");
    }
    const auto t1 = Clock::now();
    if (i >= warm) out.push_back(bench::ns_between(t0, t1));
  }
  ctl_.await("bare");
}

void PingDriver::unix_block(uint64_t warm, uint64_t count, std::vector<uint64_t>& out) {
  ctl_.command({PingOp::kUnix, 0, warm + count}, "unix");
  const int fd = sh_.unix_pair.fd[0];
  for (uint64_t i = 0; i < warm + count; ++i) {
    uint64_t v = ++seq_unix_, back = 0;
    const auto t0 = Clock::now();
    if (!write_all(fd, &v, 8) || !read_all(fd, &back, 8)) bench::die("unix ping-pong: socket error");
    const auto t1 = Clock::now();
    if (back != v) bench::die("unix ping-pong: wrong echo");
    if (i >= warm) out.push_back(bench::ns_between(t0, t1));
  }
  ctl_.await("unix");
}

}  // namespace fabric_bench
