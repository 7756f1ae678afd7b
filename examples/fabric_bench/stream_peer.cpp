// The peer of bench_fabric_stream: receives each stream, reads every byte
// and returns the checksum.
#include <sys/mman.h>

#include <new>

#include "bench/session.hpp"
#include "clan_emul/dmq_receiver.hpp"
#include "clan_emul/futex.hpp"
#include "fabric_bench/header.hpp"
#include "fabric_bench/stream.hpp"
#include "fabric_bench/words.hpp"

namespace fabric_bench {
namespace {

using Clock = std::chrono::steady_clock;
using clan::Errc;
using std::chrono::seconds;

// A stream's result so far; the first message starts the peer's clock.
struct Tally {
  StreamReply r{};
  Clock::time_point first{};
  void arrived(uint64_t m) {
    if (m == 0) first = Clock::now();
  }
  void add(uint64_t sum) {
    r.checksum += sum;
    ++r.messages;
  }
  void finish() { r.elapsed_ns = (Clock::now() - first).count(); }
};

class StreamPeer {
 public:
  StreamPeer(StreamShared& sh, bench::Channel ctl) : sh_(sh), ctl_(std::move(ctl)) {}

  // 0, or the exit code of the step that failed.
  int setup(const bench::CommonOptions& o) {
    auto nic = clan::Nic::open(nic_config("fabric-b", o.spin_ns));
    if (!nic) return 10;
    nic_ = std::move(nic.value());
    auto rx = clan::DmqReceiver::create(*nic_, dmq_config());
    if (!rx) return 13;
    rx_ = std::move(rx.value());
    if (!ctl_.put(DmqHello{rx_->cookie(), 0})) return 14;
    DmqHello theirs{};
    if (!ctl_.get(theirs, seconds(30)) || theirs.status != 0) return 15;
    if (rx_->attach(theirs.dmq) != Errc::kOk) return 17;
    return ctl_.put(StreamReply{}) ? 0 : 18;
  }

  int serve() {
    for (;;) {
      StreamCommand c{};
      // The parent may spend a while on its own measurements (memcpy, output).
      if (!ctl_.get(c, seconds(600))) return 20;
      if (c.op == StreamOp::kQuit) return 0;
      const uint64_t wakes0 = clan::futex_wake_calls();
      const clan::Deadline dl = clan::Deadline::after(seconds(60));
      // A starts the clock only once this process is awake and about to
      // wait (spinning first) for the data.
      sh_.started.started();
      Tally t;
      t.r.status = receive(c, dl, t);
      if (t.r.status != 0) {
        ctl_.put(StreamReply{t.r.status});
        return 30;
      }
      t.finish();
      t.r.wakes = clan::futex_wake_calls() - wakes0;
      if (!ctl_.put(t.r)) return 21;
    }
  }

 private:
  int32_t receive(const StreamCommand& c, const clan::Deadline& dl, Tally& t) {
    switch (c.op) {
      case StreamOp::kPio:
      case StreamOp::kDma:
        return dmq(c, dl, t);
      case StreamOp::kUnix:
        return unix_stream(c, t);
      case StreamOp::kBare:
        return bare(c, dl, t);
      default:
        return -3;
    }
  }

  int32_t dmq(const StreamCommand& c, const clan::Deadline& dl, Tally& t) {
    for (uint64_t m = 0; m < c.count; ++m) {
      auto msg = rx_->receive(dl);
      if (!msg) return static_cast<int32_t>(msg.error());
      t.arrived(m);
      if (msg->size != c.size) return -2;
      t.add(sum_words(msg->data, msg->size));
      if (Errc e = rx_->release(); e != Errc::kOk) return static_cast<int32_t>(e);
    }
    return 0;
  }

  int32_t unix_stream(const StreamCommand& c, Tally& t) {
    if (c.size > kMaxMessage) return -2;
    for (uint64_t m = 0; m < c.count; ++m) {
      if (!read_all(sh_.unix_pair.fd[1], sock_buf_.data(), c.size)) return -1;
      t.arrived(m);
      t.add(sum_words(sock_buf_.data(), c.size));
    }
    return 0;
  }

  int32_t bare(const StreamCommand& c, const clan::Deadline& dl, Tally& t) {
    BareRing::Header* h = sh_.ring.header;
    for (uint64_t m = 0; m < c.count; ++m) {
      uint32_t n = 0;
      while (h->write_i.v.load(std::memory_order_acquire) == bare_read_) {
        clan::cpu_relax();
        if ((++n & 0xffff) == 0 && dl.expired()) return static_cast<int32_t>(Errc::kTimeout);
      }
      t.arrived(m);
      const std::byte* at = sh_.ring.data() + (bare_read_ & (kRingBytes - 1));
      uint64_t len;
      std::memcpy(&len, at, 8);
      if (len != c.size) return -2;
      t.add(sum_words(at + 8, len));
      bare_read_ += 8 + clan::dmq::align8(len);
      h->read_i.v.store(bare_read_, std::memory_order_release);
    }
    return 0;
  }

  StreamShared& sh_;
  bench::Channel ctl_;
  std::unique_ptr<clan::Nic> nic_;
  std::unique_ptr<clan::DmqReceiver> rx_;
  std::vector<std::byte> sock_buf_ = std::vector<std::byte>(kMaxMessage);
  uint64_t bare_read_ = 0;
};

}  // namespace

const char* stream_name(StreamOp op) {
  switch (op) {
    case StreamOp::kPio:
      return "pio";
    case StreamOp::kDma:
      return "dma";
    case StreamOp::kBare:
      return "bare";
    default:
      return "unix";
  }
}

BareRing::BareRing() {
  const size_t bytes = sizeof(Header) + kRingBytes + 8 + kMaxMessage;
  void* ring = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (ring == MAP_FAILED) bench::die("mmap of the bare ring failed");
  header = new (ring) Header();
}

int run_stream_peer(const bench::CommonOptions& o, StreamShared& sh, bench::Channel ctl) {
  pin_side(o, 1);
  StreamPeer peer(sh, std::move(ctl));
  const int code = peer.setup(o);
  return code != 0 ? code : peer.serve();
}

}  // namespace fabric_bench
