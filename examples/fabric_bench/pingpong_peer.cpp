// The peer of bench_fabric_pingpong: echoes PIO words, bare cache-line
// words and socket messages, one block per command.
#include <new>

#include "bench/session.hpp"
#include "clan_emul/futex.hpp"
#include "fabric_bench/program.hpp"
#include "fabric_bench/pingpong.hpp"
#include "fabric_bench/words.hpp"

namespace fabric_bench {
namespace {

using clan::Errc;
using std::chrono::seconds;

class PingPeer : PeerSide {
 public:
  PingPeer(PingShared& sh, bench::Channel ctl) : PeerSide(std::move(ctl)), sh_(sh) {}

  // 0, or the exit code of the step that failed.
  int setup(const bench::CommonOptions& o) {
    if (!open_nic(o.spin_ns)) return 10;
    auto region = nic_->export_region(4096);
    if (!region) return 11;
    region_ = std::move(region.value());
    auto tw = nic_->arm_tripwire(region_, 0);
    if (!tw) return 12;
    tw_ = std::move(tw.value());
    if (!ctl_.put(PioHello{region_.cookie(), 0})) return 14;
    PioHello theirs{};
    if (!ctl_.get(theirs, seconds(30)) || theirs.status != 0) return 15;
    auto ap = nic_->import(theirs.pio);
    if (!ap) return 16;
    ap_ = std::move(ap.value());
    return ctl_.put(PingReply{}) ? 0 : 18;
  }

  int serve() {
    return serve_commands<PingCommand, PingReply>(ctl_, [this](const PingCommand& c) {
      return PingReply{run(c, clan::Deadline::after(seconds(60)))};
    });
  }

 private:
  int32_t run(const PingCommand& c, const clan::Deadline& dl) {
    switch (c.op) {
      case PingOp::kPio:
        return pio(c.count, dl);
      case PingOp::kBare:
        return bare(c.count, dl);
      case PingOp::kUnix:
        return unix_echo(c.count);
      default:
        return -3;
    }
  }

  int32_t pio(uint64_t count, const clan::Deadline& dl) {
    // Handshake: tell A that this side is now awake and about to spin, so
    // the first timed ping does not race this process's wake-up from the
    // control socket (which would start the block with both sides asleep).
    if (Errc e = ap_.write_word(0, kHello | ++pio_blocks_); e != Errc::kOk) return static_cast<int32_t>(e);
    const std::byte* in_word = region_.data();
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t v = 0;
      Errc e = tw_.wait(
          [&] {
            v = load_word(in_word);
            return v != last_pio_;
          },
          dl);
      if (e != Errc::kOk) return static_cast<int32_t>(e);
      last_pio_ = v;
      e = ap_.write_word(0, v);
      if (e != Errc::kOk) return static_cast<int32_t>(e);
    }
    return 0;
  }

  int32_t bare(uint64_t count, const clan::Deadline& dl) {
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t v;
      uint32_t n = 0;
      while ((v = sh_.bare->a_to_b.v.load(std::memory_order_acquire)) == last_bare_) {
        clan::cpu_relax();
        if ((++n & 0xffff) == 0 && dl.expired()) return static_cast<int32_t>(Errc::kTimeout);
      }
      last_bare_ = v;
      sh_.bare->b_to_a.v.store(v, std::memory_order_release);
    }
    return 0;
  }

  int32_t unix_echo(uint64_t count) {
    const int fd = sh_.unix_pair.fd[1];
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t v;
      if (!read_all(fd, &v, 8) || !write_all(fd, &v, 8)) return -1;
    }
    return 0;
  }

  PingShared& sh_;
  clan::Region region_;
  clan::Tripwire tw_;
  clan::Aperture ap_;
  uint64_t last_pio_ = 0, last_bare_ = 0, pio_blocks_ = 0;
};

}  // namespace

PingShared::PingShared() : bare(new (map_shared(4096, "the shared page")) Page()), unix_pair(SOCK_STREAM) {}

int run_pingpong_peer(const bench::CommonOptions& o, PingShared& sh, bench::Channel ctl) {
  return serve_as_peer<PingPeer>(o, sh, std::move(ctl));
}

}  // namespace fabric_bench
