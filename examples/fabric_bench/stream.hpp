// bench_fabric_stream's two processes: a stream of messages from the
// measuring side (A) to the peer (B), which reads every byte and returns a
// checksum: over the DMQ by PIO and by DMA, over a Unix-domain stream
// socketpair, and over a bare ring in shared memory (the floor).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/channel.hpp"
#include "bench/control.hpp"
#include "bench/options.hpp"
#include "bench/start_signal.hpp"
#include "clan_emul/cookie.hpp"
#include "clan_emul/deadline.hpp"
#include "clan_emul/dmq_sender.hpp"
#include "clan_emul/nic.hpp"
#include "fabric_bench/config.hpp"
#include "fabric_bench/program.hpp"
#include "fabric_bench/socket_io.hpp"

namespace fabric_bench {

enum class StreamOp : uint32_t { kPio = 1, kDma, kUnix, kBare, kQuit };

// The transports' names in tables and files.
const char* stream_name(StreamOp op);

struct StreamCommand {
  StreamOp op;
  uint32_t pad = 0;
  uint64_t count = 0;  // messages
  uint64_t size = 0;   // bytes per message
};

struct StreamReply {
  int32_t status = 0;  // Errc, -1 for a socket error, -2 for a wrong size
  uint32_t pad = 0;
  uint64_t checksum = 0;
  uint64_t messages = 0;
  uint64_t wakes = 0;      // futex wake-up system calls the peer made
  int64_t elapsed_ns = 0;  // the peer's view: first message to last
};

// The DMQ's ends, exchanged at set-up: B's ring, A's word.
struct DmqHello {
  clan::RdmaCookie dmq;
  int32_t status;
};

// The bare ring: the DMQ's framing (8-byte header, payload padded to 8,
// contiguous thanks to a reserve after the ring) in a plain MAP_SHARED
// mapping, with free-running indices and pure spinning. No clan_emul, no
// checks, no tripwires: the floor for the DMQ stream.
struct BareRing {
  struct Header {
    Line write_i;
    Line read_i;
  };
  BareRing();
  Header* header = nullptr;
  std::byte* data() const { return reinterpret_cast<std::byte*>(header) + sizeof(Header); }
};

// What the two processes share across the fork.
struct StreamShared {
  StreamShared() : unix_pair(SOCK_STREAM) {}
  BareRing ring;
  SocketPair unix_pair;
  bench::StartSignal started;  // the peer has begun command n
};

// The peer (B): receives each stream and checks it. Returns its exit code.
int run_stream_peer(const bench::CommonOptions& o, StreamShared& sh, bench::Channel ctl);

struct BwPoint {
  std::string transport;
  uint64_t size = 0;
  int rep = 0;
  uint64_t messages = 0;
  uint64_t bytes = 0;
  double seconds = 0;
  double peer_seconds = 0;
  uint64_t wakes = 0;  // futex wake-up system calls, both sides
  double bytes_per_s() const { return seconds > 0 ? static_cast<double>(bytes) / seconds : 0; }
};

// The measuring side (A).
class StreamDriver : public Side {
 public:
  StreamDriver(const bench::CommonOptions& o, StreamShared& sh, bench::Channel ctl);
  void setup();
  void quit();

  // Streams `count` messages of `size` bytes; timed from the first send to
  // the peer's verified reply.
  BwPoint stream(StreamOp op, uint64_t size, uint64_t count);

 private:
  // Each sends `count` messages and returns the checksum the peer must see.
  uint64_t send_pio(uint64_t size, uint64_t count, const clan::Deadline& dl);
  uint64_t send_dma(uint64_t size, uint64_t count, const clan::Deadline& dl);
  uint64_t send_bare(uint64_t size, uint64_t count, const clan::Deadline& dl);
  uint64_t send_unix(uint64_t size, uint64_t count);
  uint64_t* buffer(size_t i);

  static constexpr size_t kMaxBuffers = 64;
  struct FreeDeleter {
    void operator()(uint64_t* p) const { std::free(p); }
  };

  const bench::CommonOptions& o_;
  StreamShared& sh_;
  bench::Control<StreamCommand, StreamReply> ctl_;
  std::unique_ptr<clan::DmqSender> tx_;
  std::vector<std::unique_ptr<uint64_t, FreeDeleter>> buffers_;
  uint64_t bare_write_ = 0;
};

}  // namespace fabric_bench
