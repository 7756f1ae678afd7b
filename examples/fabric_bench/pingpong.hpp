// bench_fabric_pingpong's two processes: single-word round trips by PIO
// (Aperture::write_word, waited for on a tripwire), over a bare cache line
// (two atomics in a shared page, no clan_emul: the floor) and over a
// Unix-domain socketpair.
#pragma once

#include <cstdint>
#include <vector>

#include "bench/channel.hpp"
#include "bench/control.hpp"
#include "bench/options.hpp"
#include "clan_emul/aperture.hpp"
#include "clan_emul/cookie.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/region.hpp"
#include "clan_emul/tripwire.hpp"
#include "fabric_bench/config.hpp"
#include "fabric_bench/program.hpp"
#include "fabric_bench/socket_io.hpp"

namespace fabric_bench {

enum class PingOp : uint32_t { kPio = 1, kBare, kUnix, kQuit };

struct PingCommand {
  PingOp op;
  uint32_t pad = 0;
  uint64_t count = 0;  // round trips
};

struct PingReply {
  int32_t status = 0;  // Errc, or -1 for a socket error
  uint32_t pad = 0;
  uint64_t wakes = 0;  // futex wake-up system calls the peer made
};

// Each side's PIO landing zone, exchanged at set-up.
struct PioHello {
  clan::RdmaCookie pio;
  int32_t status;
};

// Handshake value of a PIO block (ping values never have the top bit set).
constexpr uint64_t kHello = uint64_t{1} << 63;

// What the two processes share across the fork: the bare baseline's two
// words on two cache lines of one page, and the socketpair.
struct PingShared {
  PingShared();
  struct Page {
    Line a_to_b;
    Line b_to_a;
  };
  Page* bare = nullptr;
  SocketPair unix_pair;
};

// The peer (B): echoes each block's round trips. Returns its exit code.
int run_pingpong_peer(const bench::CommonOptions& o, PingShared& sh, bench::Channel ctl);

// The measuring side (A).
class PingDriver : public Side {
 public:
  PingDriver(const bench::CommonOptions& o, PingShared& sh, bench::Channel ctl);
  void setup();
  void quit();

  // One block of `warm` + `count` round trips each; the measured ones are
  // appended to `out`. pio_block returns the wake-up calls of both sides.
  uint64_t pio_block(uint64_t warm, uint64_t count, std::vector<uint64_t>& out);
  void bare_block(uint64_t warm, uint64_t count, std::vector<uint64_t>& out);
  void unix_block(uint64_t warm, uint64_t count, std::vector<uint64_t>& out);

 private:
  void wait_pio_hello(const clan::Deadline& dl);

  const bench::CommonOptions& o_;
  PingShared& sh_;
  bench::Control<PingCommand, PingReply> ctl_;
  clan::Region region_;
  clan::Tripwire tw_;
  clan::Aperture ap_;
  uint64_t seq_pio_ = 0, seq_bare_ = 0, seq_unix_ = 0, pio_blocks_ = 0;
};

}  // namespace fabric_bench
