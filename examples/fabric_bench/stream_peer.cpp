// The peer of bench_fabric_stream: receives each stream, reads every byte
// and returns the checksum.
#include <new>

#include "bench/session.hpp"
#include "clan_emul/dmq_receiver.hpp"
#include "clan_emul/futex.hpp"
#include "fabric_bench/program.hpp"
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

class StreamPeer : PeerSide {
 public:
  StreamPeer(StreamShared& sh, bench::Channel ctl) : PeerSide(std::move(ctl)), sh_(sh) {}

  // 0, or the exit code of the step that failed.
  int setup(const bench::CommonOptions& o) {
    if (!open_nic(o.spin_ns)) return 10;
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
    return serve_commands<StreamCommand, StreamReply>(ctl_, [this](const StreamCommand& c) {
      const clan::Deadline dl = clan::Deadline::after(seconds(60));
      // A starts the clock only once this process is awake and about to
      // wait (spinning first) for the data.
      sh_.started.started();
      Tally t;
      if (const int32_t status = receive(c, dl, t); status != 0) return StreamReply{status};
      t.finish();
      return t.r;
    });
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

BareRing::BareRing()
    : header(new (map_shared(sizeof(Header) + kRingBytes + 8 + kMaxMessage, "the bare ring")) Header()) {}

int run_stream_peer(const bench::CommonOptions& o, StreamShared& sh, bench::Channel ctl) {
  return serve_as_peer<StreamPeer>(o, sh, std::move(ctl));
}

}  // namespace fabric_bench
