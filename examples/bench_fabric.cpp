// bench_fabric: the raw fabric benchmarks of paper 000 sect. 3.2 on the
// emulated CLAN NIC, between two real processes, with the physical baselines
// measured in the same run.
//
//  1. Single-word PIO ping-pong round trips (Aperture::write_word, waited for
//     with Tripwire::wait), alternated A B A B with a bare cache-line
//     ping-pong (two std::atomic<uint64_t> in a MAP_SHARED page, no
//     clan_emul: the floor) and a Unix-domain socketpair ping-pong of 8 bytes.
//  2. DMQ streaming bandwidth vs message size, PIO and DMA, with the payload
//     written by the sender for every message and every byte read by the
//     receiver (a checksum verified at the end); the same stream over a
//     Unix-domain SOCK_STREAM socketpair; single-thread memcpy of a 64 KiB
//     cache-resident block.
//
// Usage: bench_fabric [--quick] [--roundtrips N] [--spin-ns N] [--pin] [--out DIR]
//                     [--alternations N] [--bw-mib N] [--bw-ms N] [--reps N]
// Tables go to stdout (Markdown), progress to stderr. Targets are reported,
// never asserted: the exit status is non-zero only when something failed.
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "bench/channel.hpp"
#include "bench/format.hpp"
#include "bench/histogram.hpp"
#include "bench/json.hpp"
#include "bench/machine.hpp"
#include "bench/peer.hpp"
#include "bench/pinning.hpp"
#include "bench/stats.hpp"
#include "clan_emul/aperture.hpp"
#include "clan_emul/dma_stream.hpp"
#include "clan_emul/dmq_layout.hpp"
#include "clan_emul/dmq_receiver.hpp"
#include "clan_emul/dmq_sender.hpp"
#include "clan_emul/futex.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/region.hpp"
#include "clan_emul/tripwire.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using clan::Errc;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr uint64_t kMiB = 1024 * 1024;
constexpr size_t kRingBytes = 256 * 1024;
constexpr size_t kMaxMessage = 64 * 1024;
constexpr size_t kMemcpyBlock = 64 * 1024;
constexpr size_t kMemcpyLarge = size_t{256} << 20;  // far beyond any cache of this VM
const std::vector<uint64_t> kSizes = {16, 64, 256, 1024, 4096, 16384, 65536};

// Targets (examples/DESIGN.md).
constexpr double kTargetPioOverBare = 3.0;     // PIO p50 / bare p50 <= 3x
constexpr double kTargetUnixOverPio = 20.0;    // unix p50 / PIO p50 >= 20x
constexpr double kTargetDmqOverMemcpy = 0.40;  // DMQ 64 KiB >= 40 % of memcpy

struct Options {
  bool quick = false;
  uint64_t roundtrips = 100000;  // per transport, over all alternations
  int alternations = 5;
  int64_t spin_ns = -1;  // -1: the NicConfig default (or CLAN_SPIN_NS)
  bool pin = false;
  std::string out;
  uint64_t bw_bytes = 64 * kMiB;  // per bandwidth point and repetition, at most
  double bw_seconds = 1.0;        // per bandwidth point and repetition, at most
  int reps = 3;                   // bandwidth repetitions (alternating transports)
  double pilot_seconds = 0.02;    // calibration (and warm-up) of each point
  double memcpy_seconds = 0.3;
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--quick] [--roundtrips N] [--spin-ns N] [--pin] [--out DIR]\n"
               "          [--alternations N] [--bw-mib N] [--bw-ms N] [--reps N]\n",
               argv0);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  bool rt = false, bw_mib = false, bw_ms = false, reps = false, alt = false;
  auto num = [&](int& i) -> long long {
    if (i + 1 >= argc) usage(argv[0]);
    char* end = nullptr;
    long long v = std::strtoll(argv[++i], &end, 10);
    if (!end || *end || v < 0) usage(argv[0]);
    return v;
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick") o.quick = true;
    else if (a == "--roundtrips") o.roundtrips = static_cast<uint64_t>(num(i)), rt = true;
    else if (a == "--spin-ns") o.spin_ns = num(i);
    else if (a == "--pin") o.pin = true;
    else if (a == "--out") {
      if (i + 1 >= argc) usage(argv[0]);
      o.out = argv[++i];
    } else if (a == "--alternations") o.alternations = static_cast<int>(num(i)), alt = true;
    else if (a == "--bw-mib") o.bw_bytes = static_cast<uint64_t>(num(i)) * kMiB, bw_mib = true;
    else if (a == "--bw-ms") o.bw_seconds = static_cast<double>(num(i)) / 1000.0, bw_ms = true;
    else if (a == "--reps") o.reps = static_cast<int>(num(i)), reps = true;
    else usage(argv[0]);
  }
  if (o.quick) {
    if (!rt) o.roundtrips = 10000;
    if (!bw_mib) o.bw_bytes = 4 * kMiB;
    if (!bw_ms) o.bw_seconds = 0.05;
    if (!reps) o.reps = 1;
    o.pilot_seconds = 0.004;
    o.memcpy_seconds = 0.03;
  }
  (void)alt;
  if (o.alternations < 1) o.alternations = 1;
  if (o.reps < 1) o.reps = 1;
  if (o.roundtrips < static_cast<uint64_t>(o.alternations)) o.roundtrips = o.alternations;
  if (o.bw_bytes < 64 * 1024) o.bw_bytes = 64 * 1024;
  return o;
}

// ---------------------------------------------------------------------------
// Payload: word j of message m is m*K + j. The sender writes it for every
// message; the receiver adds up every word; the sums must agree.

constexpr uint64_t kMix = 0x9E3779B97F4A7C15ull;

inline void fill_payload(uint64_t* dst, size_t bytes, uint64_t m) {
  const uint64_t base = m * kMix;
  const size_t n = bytes / 8;
  for (size_t j = 0; j < n; ++j) dst[j] = base + j;
}
inline uint64_t expected_sum(size_t bytes, uint64_t m) {
  const uint64_t n = bytes / 8;
  return n * (m * kMix) + n * (n - 1) / 2;
}
inline uint64_t sum_words(const std::byte* p, size_t bytes) {
  uint64_t s = 0;
  const size_t n = bytes / 8;
  for (size_t j = 0; j < n; ++j) {
    uint64_t w;
    std::memcpy(&w, p + 8 * j, 8);
    s += w;
  }
  return s;
}

// Keeps the compiler from dropping or merging memcpy/fill loops.
inline void clobber(void* p) { asm volatile("" : : "r"(p) : "memory"); }

// ---------------------------------------------------------------------------
// Control protocol between the measuring process (A, the parent) and its
// peer (B, the child).

enum class Op : uint32_t {
  kPio = 1,
  kBare,
  kUnix,
  kStreamPio,
  kStreamDma,
  kStreamUnix,
  kStreamBare,
  kQuit
};

struct Command {
  Op op;
  uint32_t pad = 0;
  uint64_t count = 0;  // round trips or messages
  uint64_t size = 0;   // message size (streams)
};

struct Reply {
  int32_t status = 0;  // Errc, or -1 for a socket error / bad size
  uint32_t pad = 0;
  uint64_t checksum = 0;
  uint64_t messages = 0;
  uint64_t wakes = 0;       // futex wake-up system calls the child made
  int64_t elapsed_ns = 0;   // child's view: first message to last
};

// Handshake value of a PIO block (ping values never have the top bit set).
constexpr uint64_t kHello = uint64_t{1} << 63;

struct Hello {
  clan::RdmaCookie pio;  // the region the peer's ping/pong word lands in
  clan::RdmaCookie dmq;  // DMQ: receiver's ring (from B) or sender's word (from A)
  int32_t status;
};

// The bare baseline: two words on two cache lines of one shared page.
struct alignas(64) Line {
  std::atomic<uint64_t> v{0};
  char pad[56];
};
struct BarePage {
  Line a_to_b;
  Line b_to_a;
  Line stream_go;  // B's handshake at the start of a stream: the command's number
};

// The bare streaming baseline: the DMQ's framing (8-byte header, payload
// padded to 8, contiguous thanks to a reserve after the ring) in a plain
// MAP_SHARED mapping, with free-running indices and pure spinning. No
// clan_emul, no checks, no tripwires: the floor for the DMQ stream.
struct BareRingHeader {
  Line write_i;
  Line read_i;
};
constexpr size_t kBareRingMap = sizeof(BareRingHeader) + kRingBytes + 8 + kMaxMessage;

struct Shared {
  BarePage* bare = nullptr;
  BareRingHeader* ring = nullptr;  // followed by the ring and its reserve
  std::byte* ring_data() const { return reinterpret_cast<std::byte*>(ring) + sizeof(BareRingHeader); }
  int unix_lat[2] = {-1, -1};     // [0] parent's end, [1] child's end
  int unix_stream[2] = {-1, -1};
};

clan::NicConfig nic_config(const char* name, const Options& o) {
  clan::NicConfig c;
  c.name = name;
  if (o.spin_ns >= 0) c.spin_budget = std::chrono::nanoseconds(o.spin_ns);
  return c;
}

clan::DmqConfig dmq_config() {
  clan::DmqConfig c;
  c.ring_bytes = kRingBytes;
  c.max_message = kMaxMessage;
  return c;
}

bool write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}
bool read_all(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t r = ::read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

inline uint64_t load_word(const std::byte* p) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(const_cast<std::byte*>(p)))
      .load(std::memory_order_acquire);
}

// ---------------------------------------------------------------------------
// The peer (B): echoes ping-pongs, receives streams. Returns its exit code.

int run_peer(const Options& o, const Shared& sh, bench::Channel ctl) {
  if (o.pin) {
    int cpu = bench::nth_allowed_cpu(1);
    if (cpu >= 0) bench::pin_to_cpu(cpu);
  }
  auto nic_r = clan::Nic::open(nic_config("fabric-b", o));
  if (!nic_r) return 10;
  clan::Nic& nic = *nic_r.value();
  auto region = nic.export_region(4096);
  if (!region) return 11;
  auto tw = nic.arm_tripwire(region.value(), 0);
  if (!tw) return 12;
  auto rx_r = clan::DmqReceiver::create(nic, dmq_config());
  if (!rx_r) return 13;
  clan::DmqReceiver& rx = *rx_r.value();

  Hello mine{region->cookie(), rx.cookie(), 0};
  if (!ctl.put(mine)) return 14;
  Hello theirs{};
  if (!ctl.get(theirs, seconds(30)) || theirs.status != 0) return 15;
  auto ap = nic.import(theirs.pio);
  if (!ap) return 16;
  if (rx.attach(theirs.dmq) != Errc::kOk) return 17;
  Reply ready{};
  if (!ctl.put(ready)) return 18;

  const std::byte* in_word = region->data();
  uint64_t last_pio = 0, last_bare = 0, pio_blocks = 0, commands = 0, bare_read = 0;
  std::vector<std::byte> sock_buf(kMaxMessage);
  const int ufd = sh.unix_lat[1], sfd = sh.unix_stream[1];

  for (;;) {
    Command c{};
    // The parent may spend a while on its own measurements (memcpy, output).
    if (!ctl.get(c, seconds(600))) return 20;
    if (c.op == Op::kQuit) return 0;
    Reply r{};
    const uint64_t wakes0 = clan::futex_wake_calls();
    const clan::Deadline dl = clan::Deadline::after(seconds(60));
    ++commands;
    if (c.op >= Op::kStreamPio && c.op <= Op::kStreamBare) {
      // Handshake through shared memory: A starts the clock only once this
      // process is awake and about to wait (spinning first) for the data.
      sh.bare->stream_go.v.store(commands, std::memory_order_release);
    }
    auto fail = [&](int32_t code) {
      r.status = code;
      ctl.put(r);
      return 30;
    };
    switch (c.op) {
      case Op::kPio: {
        // Handshake: tell A that this side is now awake and about to spin,
        // so the first timed ping does not race this process's wake-up from
        // the control socket (which would start the block with both sides
        // asleep; see the report on spin budgets).
        if (Errc e = ap->write_word(0, kHello | ++pio_blocks); e != Errc::kOk) {
          return fail(static_cast<int32_t>(e));
        }
        for (uint64_t i = 0; i < c.count; ++i) {
          uint64_t v = 0;
          Errc e = tw->wait(
              [&] {
                v = load_word(in_word);
                return v != last_pio;
              },
              dl);
          if (e != Errc::kOk) return fail(static_cast<int32_t>(e));
          last_pio = v;
          e = ap->write_word(0, v);
          if (e != Errc::kOk) return fail(static_cast<int32_t>(e));
        }
        break;
      }
      case Op::kBare: {
        for (uint64_t i = 0; i < c.count; ++i) {
          uint64_t v;
          uint32_t n = 0;
          while ((v = sh.bare->a_to_b.v.load(std::memory_order_acquire)) == last_bare) {
            clan::cpu_relax();
            if ((++n & 0xffff) == 0 && dl.expired()) return fail(static_cast<int32_t>(Errc::kTimeout));
          }
          last_bare = v;
          sh.bare->b_to_a.v.store(v, std::memory_order_release);
        }
        break;
      }
      case Op::kUnix: {
        for (uint64_t i = 0; i < c.count; ++i) {
          uint64_t v;
          if (!read_all(ufd, &v, 8) || !write_all(ufd, &v, 8)) return fail(-1);
        }
        break;
      }
      case Op::kStreamPio:
      case Op::kStreamDma: {
        uint64_t sum = 0;
        Clock::time_point first{};
        for (uint64_t m = 0; m < c.count; ++m) {
          auto msg = rx.receive(dl);
          if (!msg) return fail(static_cast<int32_t>(msg.error()));
          if (m == 0) first = Clock::now();
          if (msg->size != c.size) return fail(-2);
          sum += sum_words(msg->data, msg->size);
          Errc e = rx.release();
          if (e != Errc::kOk) return fail(static_cast<int32_t>(e));
        }
        r.checksum = sum;
        r.messages = c.count;
        r.elapsed_ns = (Clock::now() - first).count();
        break;
      }
      case Op::kStreamUnix: {
        if (c.size > kMaxMessage) return fail(-2);
        uint64_t sum = 0;
        Clock::time_point first{};
        for (uint64_t m = 0; m < c.count; ++m) {
          if (!read_all(sfd, sock_buf.data(), c.size)) return fail(-1);
          if (m == 0) first = Clock::now();
          sum += sum_words(sock_buf.data(), c.size);
        }
        r.checksum = sum;
        r.messages = c.count;
        r.elapsed_ns = (Clock::now() - first).count();
        break;
      }
      case Op::kStreamBare: {
        uint64_t sum = 0;
        Clock::time_point first{};
        for (uint64_t m = 0; m < c.count; ++m) {
          uint64_t w;
          uint32_t n = 0;
          while ((w = sh.ring->write_i.v.load(std::memory_order_acquire)) == bare_read) {
            clan::cpu_relax();
            if ((++n & 0xffff) == 0 && dl.expired()) return fail(static_cast<int32_t>(Errc::kTimeout));
          }
          if (m == 0) first = Clock::now();
          const std::byte* at = sh.ring_data() + (bare_read & (kRingBytes - 1));
          uint64_t len;
          std::memcpy(&len, at, 8);
          if (len != c.size) return fail(-2);
          sum += sum_words(at + 8, len);
          bare_read += 8 + clan::dmq::align8(len);
          sh.ring->read_i.v.store(bare_read, std::memory_order_release);
        }
        r.checksum = sum;
        r.messages = c.count;
        r.elapsed_ns = (Clock::now() - first).count();
        break;
      }
      default:
        return fail(-3);
    }
    r.wakes = clan::futex_wake_calls() - wakes0;
    if (!ctl.put(r)) return 21;
  }
}

// ---------------------------------------------------------------------------
// The measuring side (A)

pid_t g_peer = -1;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "bench_fabric: error: %s\n", what.c_str());
  if (g_peer > 0) {
    kill(g_peer, SIGKILL);
    int code = bench::reap_peer(g_peer, milliseconds(2000));
    std::fprintf(stderr, "bench_fabric: peer exit status %d\n", code);
  }
  std::exit(1);
}

inline uint64_t ns_between(Clock::time_point a, Clock::time_point b) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}

struct LatencyResult {
  std::vector<uint64_t> all;                   // every measured round trip
  std::vector<bench::Summary> per_round;       // one per alternation
  uint64_t wakes = 0;                          // wake-up syscalls, both sides
};

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

class Driver {
 public:
  Driver(const Options& o, const Shared& sh, bench::Channel ctl) : o_(o), sh_(sh), ctl_(std::move(ctl)) {}

  void setup() {
    auto nic_r = clan::Nic::open(nic_config("fabric-a", o_));
    if (!nic_r) die(std::string("Nic::open: ") + clan::to_string(nic_r.error()));
    nic_ = std::move(nic_r.value());
    auto region = nic_->export_region(4096);
    if (!region) die(std::string("export_region: ") + clan::to_string(region.error()));
    region_ = std::move(region.value());
    auto tw = nic_->arm_tripwire(region_, 0);
    if (!tw) die(std::string("arm_tripwire: ") + clan::to_string(tw.error()));
    tw_ = std::move(tw.value());
    auto tx = clan::DmqSender::create(*nic_, dmq_config());
    if (!tx) die(std::string("DmqSender::create: ") + clan::to_string(tx.error()));
    tx_ = std::move(tx.value());
    // Start the DMA engine thread now, before this thread is pinned, so that
    // with --pin it is not confined to the sender's CPU.
    (void)tx_->dma();
    if (o_.pin) {
      int cpu = bench::nth_allowed_cpu(0);
      pinned_ = cpu >= 0 && bench::nth_allowed_cpu(1) >= 0 && bench::pin_to_cpu(cpu);
    }

    Hello theirs{};
    if (!ctl_.get(theirs, seconds(30))) die("no hello from the peer");
    Hello mine{region_.cookie(), tx_->cookie(), 0};
    if (!ctl_.put(mine)) die("cannot send hello");
    auto ap = nic_->import(theirs.pio);
    if (!ap) die(std::string("import: ") + clan::to_string(ap.error()));
    ap_ = std::move(ap.value());
    if (Errc e = tx_->attach(theirs.dmq); e != Errc::kOk) die(std::string("attach: ") + clan::to_string(e));
    Reply ready{};
    if (!ctl_.get(ready, seconds(30)) || ready.status != 0) die("peer setup failed");
  }

  std::chrono::nanoseconds spin_budget() const { return nic_->spin_budget(); }
  bool pinned() const { return pinned_; }

  void quit() {
    Command c{Op::kQuit};
    ctl_.put(c);
  }

  void command(const Command& c, const char* what) {
    ++commands_;  // the peer numbers commands the same way (stream handshakes)
    if (!ctl_.put(c)) die(std::string("cannot send command for ") + what);
  }
  Reply await(const char* what, seconds limit = seconds(120)) {
    Reply r{};
    if (!ctl_.get(r, limit)) die(std::string("no reply from the peer after ") + what);
    if (r.status != 0) die(std::string("peer failed in ") + what + ": status " + std::to_string(r.status));
    return r;
  }

  // One block of `warm` + `count` round trips; appends the measured ones.
  uint64_t pio_block(uint64_t warm, uint64_t count, std::vector<uint64_t>& out) {
    command({Op::kPio, 0, warm + count, 0}, "pio");
    const clan::Deadline dl = clan::Deadline::after(seconds(60));
    const std::byte* in = region_.data();
    const uint64_t w0 = clan::futex_wake_calls();
    // Wait, spinning, for the peer's handshake: it is awake and spinning now.
    const uint64_t hello = kHello | ++pio_blocks_;
    for (uint32_t n = 0; load_word(in) != hello;) {
      clan::cpu_relax();
      if ((++n & 0xffff) == 0 && dl.expired()) die("pio ping-pong: no handshake from the peer");
    }
    for (uint64_t i = 0; i < warm + count; ++i) {
      const uint64_t v = ++seq_pio_;
      const auto t0 = Clock::now();
      Errc e = ap_.write_word(0, v);
      if (e == Errc::kOk) e = tw_.wait([&] { return load_word(in) == v; }, dl);
      const auto t1 = Clock::now();
      if (e != Errc::kOk) die(std::string("pio ping-pong: ") + clan::to_string(e));
      if (i >= warm) out.push_back(ns_between(t0, t1));
    }
    Reply r = await("pio");
    return r.wakes + (clan::futex_wake_calls() - w0);
  }

  void bare_block(uint64_t warm, uint64_t count, std::vector<uint64_t>& out) {
    command({Op::kBare, 0, warm + count, 0}, "bare");
    const clan::Deadline dl = clan::Deadline::after(seconds(60));
    BarePage* p = sh_.bare;
    for (uint64_t i = 0; i < warm + count; ++i) {
      const uint64_t v = ++seq_bare_;
      const auto t0 = Clock::now();
      p->a_to_b.v.store(v, std::memory_order_release);
      uint32_t n = 0;
      while (p->b_to_a.v.load(std::memory_order_acquire) != v) {
        clan::cpu_relax();
        if ((++n & 0xffff) == 0 && dl.expired()) die("bare ping-pong timed out");
      }
      const auto t1 = Clock::now();
      if (i >= warm) out.push_back(ns_between(t0, t1));
    }
    await("bare");
  }

  void unix_block(uint64_t warm, uint64_t count, std::vector<uint64_t>& out) {
    command({Op::kUnix, 0, warm + count, 0}, "unix");
    const int fd = sh_.unix_lat[0];
    for (uint64_t i = 0; i < warm + count; ++i) {
      uint64_t v = ++seq_unix_, back = 0;
      const auto t0 = Clock::now();
      if (!write_all(fd, &v, 8) || !read_all(fd, &back, 8)) die("unix ping-pong: socket error");
      const auto t1 = Clock::now();
      if (back != v) die("unix ping-pong: wrong echo");
      if (i >= warm) out.push_back(ns_between(t0, t1));
    }
    await("unix");
  }

  // Streams `count` messages of `size` bytes; returns the sender's elapsed
  // time (first send to the receiver's verified reply).
  BwPoint stream(Op op, uint64_t size, uint64_t count) {
    const char* name = op == Op::kStreamPio   ? "pio"
                       : op == Op::kStreamDma ? "dma"
                       : op == Op::kStreamBare ? "bare"
                                               : "unix";
    command({op, 0, count, size}, name);
    const clan::Deadline dl = clan::Deadline::after(seconds(60));
    for (uint32_t n = 0; sh_.bare->stream_go.v.load(std::memory_order_acquire) != commands_;) {
      clan::cpu_relax();
      if ((++n & 0xffff) == 0 && dl.expired()) die(std::string(name) + " stream: no handshake from the peer");
    }
    uint64_t expect = 0;
    const uint64_t w0 = clan::futex_wake_calls();
    const auto t0 = Clock::now();
    if (op == Op::kStreamPio) {
      uint64_t* buf = buffer(0);
      for (uint64_t m = 0; m < count; ++m) {
        fill_payload(buf, size, m);
        expect += expected_sum(size, m);
        Errc e = tx_->send(buf, size, dl, clan::Transfer::kPio);
        if (e != Errc::kOk) die(std::string("DMQ PIO send: ") + clan::to_string(e));
      }
    } else if (op == Op::kStreamDma) {
      // Several messages in flight over a few source buffers; a buffer is
      // rewritten only once the DMA that read it has completed.
      const size_t nbuf = std::clamp<size_t>(kRingBytes / (2 * (size + 8)), 4, kMaxBuffers);
      std::vector<uint64_t> tickets(nbuf, 0);
      clan::DmaStream& dma = tx_->dma();
      uint64_t last = 0;
      for (uint64_t m = 0; m < count; ++m) {
        const size_t b = m % nbuf;
        if (tickets[b] != 0 && !dma.done(tickets[b])) {
          Errc e = dma.wait(tickets[b], dl);
          if (e != Errc::kOk) die(std::string("DMA wait: ") + clan::to_string(e));
        }
        uint64_t* buf = buffer(b);
        fill_payload(buf, size, m);
        expect += expected_sum(size, m);
        auto t = tx_->send_dma_async(buf, size, dl);
        if (!t) die(std::string("DMQ DMA send: ") + clan::to_string(t.error()));
        tickets[b] = last = t.value();
      }
      if (last) {
        Errc e = dma.wait(last, dl);
        if (e != Errc::kOk) die(std::string("DMA wait: ") + clan::to_string(e));
      }
      if (dma.error() != Errc::kOk) die(std::string("DMA error: ") + clan::to_string(dma.error()));
    } else if (op == Op::kStreamBare) {
      uint64_t* buf = buffer(0);
      const uint64_t need = 8 + clan::dmq::align8(size);
      for (uint64_t m = 0; m < count; ++m) {
        fill_payload(buf, size, m);
        expect += expected_sum(size, m);
        uint32_t n = 0;
        while (kRingBytes - (bare_write_ - sh_.ring->read_i.v.load(std::memory_order_acquire)) < need) {
          clan::cpu_relax();
          if ((++n & 0xffff) == 0 && dl.expired()) die("bare stream timed out");
        }
        std::byte* at = sh_.ring_data() + (bare_write_ & (kRingBytes - 1));
        std::memcpy(at, &size, 8);
        std::memcpy(at + 8, buf, size);
        bare_write_ += need;
        sh_.ring->write_i.v.store(bare_write_, std::memory_order_release);
      }
    } else {
      uint64_t* buf = buffer(0);
      for (uint64_t m = 0; m < count; ++m) {
        fill_payload(buf, size, m);
        expect += expected_sum(size, m);
        if (!write_all(sh_.unix_stream[0], buf, size)) die("unix stream: socket error");
      }
    }
    Reply r = await(name);
    const auto t1 = Clock::now();
    if (r.checksum != expect || r.messages != count) {
      die(std::string(name) + " stream: checksum mismatch (data lost or corrupted)");
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

 private:
  static constexpr size_t kMaxBuffers = 64;
  uint64_t* buffer(size_t i) {
    if (buffers_.empty()) {
      for (size_t k = 0; k < kMaxBuffers; ++k) {
        buffers_.emplace_back(static_cast<uint64_t*>(std::aligned_alloc(64, kMaxMessage)));
        if (!buffers_.back()) die("out of memory");
        std::memset(buffers_.back().get(), 0, kMaxMessage);
      }
    }
    return buffers_[i].get();
  }
  struct FreeDeleter {
    void operator()(uint64_t* p) const { std::free(p); }
  };

  const Options& o_;
  const Shared& sh_;
  bench::Channel ctl_;
  std::unique_ptr<clan::Nic> nic_;
  clan::Region region_;
  clan::Tripwire tw_;
  clan::Aperture ap_;
  std::unique_ptr<clan::DmqSender> tx_;
  std::vector<std::unique_ptr<uint64_t, FreeDeleter>> buffers_;
  uint64_t seq_pio_ = 0, seq_bare_ = 0, seq_unix_ = 0, pio_blocks_ = 0, commands_ = 0, bare_write_ = 0;
  bool pinned_ = false;
};

// Single-thread memcpy of `block` bytes, bytes copied per second. Two
// references are measured: a cache-resident 64 KiB block (the ceiling of a
// copy that never leaves one core's cache) and a large block (kMemcpyLarge,
// far beyond the caches: the memory-bandwidth figure that a transport moving
// data between cores is measured against; see examples/DESIGN.md).
double memcpy_bandwidth(size_t block, double secs) {
  std::unique_ptr<std::byte, void (*)(void*)> src(static_cast<std::byte*>(std::aligned_alloc(64, block)), std::free);
  std::unique_ptr<std::byte, void (*)(void*)> dst(static_cast<std::byte*>(std::aligned_alloc(64, block)), std::free);
  if (!src || !dst) die("out of memory");
  std::memset(src.get(), 1, block);
  std::memset(dst.get(), 2, block);
  const int batch = block >= (1u << 20) ? 1 : 256;
  for (int i = 0; i < (block >= (1u << 20) ? 1 : 64); ++i) {  // warm-up
    std::memcpy(dst.get(), src.get(), block);
    clobber(dst.get());
  }
  uint64_t copies = 0;
  const auto t0 = Clock::now();
  auto t1 = t0;
  do {
    for (int i = 0; i < batch; ++i) {
      std::memcpy(dst.get(), src.get(), block);
      clobber(dst.get());
      clobber(src.get());
    }
    copies += static_cast<uint64_t>(batch);
    t1 = Clock::now();
  } while (std::chrono::duration<double>(t1 - t0).count() < secs);
  return static_cast<double>(copies * block) / std::chrono::duration<double>(t1 - t0).count();
}

// ---------------------------------------------------------------------------
// Output

struct Results {
  bench::MachineInfo machine;
  double clock_ns = 0;
  int64_t spin_ns = 0;
  bool pinned = false;
  uint64_t block = 0, warm = 0;
  LatencyResult pio, bare, unix_;
  std::vector<BwPoint> bw;
  std::vector<double> memcpy_bps;        // 64 KiB, cache resident; one per repetition
  std::vector<double> memcpy_large_bps;  // kMemcpyLarge, out of cache; one per repetition
};

std::vector<double> per_round_ratio(const LatencyResult& num, const LatencyResult& den) {
  std::vector<double> r;
  for (size_t i = 0; i < num.per_round.size() && i < den.per_round.size(); ++i) {
    if (den.per_round[i].p50 > 0) r.push_back(num.per_round[i].p50 / den.per_round[i].p50);
  }
  return r;
}

std::vector<double> bw_values(const Results& res, const std::string& t, uint64_t size) {
  std::vector<double> v;
  for (const BwPoint& p : res.bw) {
    if (p.transport == t && p.size == size) v.push_back(p.bytes_per_s());
  }
  return v;
}

std::vector<double> wakes_per_msg(const Results& res, const std::string& t, uint64_t size) {
  std::vector<double> v;
  for (const BwPoint& p : res.bw) {
    if (p.transport == t && p.size == size && p.messages) {
      v.push_back(static_cast<double>(p.wakes) / static_cast<double>(p.messages));
    }
  }
  return v;
}

// DMQ 64 KiB / large memcpy, per repetition (each memcpy is measured just before that point).
std::vector<double> per_rep_memcpy_ratio(const Results& res, const std::string& t) {
  std::vector<double> v;
  for (const BwPoint& p : res.bw) {
    if (p.transport == t && p.size == kMemcpyBlock &&
        static_cast<size_t>(p.rep) < res.memcpy_large_bps.size()) {
      v.push_back(p.bytes_per_s() / res.memcpy_large_bps[static_cast<size_t>(p.rep)]);
    }
  }
  return v;
}

std::string pct_range(const std::vector<double>& v) {
  if (v.size() < 2) return "";
  return bench::fmt(" (reps %.0f", 100 * bench::min_of(v)) + bench::fmt("-%.0f %%)", 100 * bench::max_of(v));
}

std::string bw_cell(const std::vector<double>& v) {
  if (v.empty()) return "-";
  if (v.size() == 1) return bench::mbs(v[0]);
  return bench::mbs(bench::median(v)) + " (" + bench::mbs(bench::min_of(v)) + "-" +
         bench::mbs(bench::max_of(v)) + ")";
}

std::string range(const std::vector<double>& v) {
  if (v.size() < 2) return "";
  return " (rounds " + bench::ratio(bench::min_of(v)) + "-" + bench::ratio(bench::max_of(v)) + ")";
}

void print_header(const Options& o, const Results& r) {
  const auto& m = r.machine;
  std::printf("# clanorb raw fabric benchmark (paper 000 sect. 3.2)\n\n");
  std::printf("| | |\n|---|---|\n");
  std::printf("| date | %s |\n", m.date_utc.c_str());
  std::printf("| CPU | %s |\n", m.cpu_model.c_str());
  std::printf("| cores | %ld online, %d allowed |\n", m.cores_online, m.cores_allowed);
  std::printf("| kernel | %s |\n", m.kernel.c_str());
  std::printf("| clock | steady_clock (%s), %.1f ns per now(), two per round trip |\n",
              m.clocksource.c_str(), r.clock_ns);
  std::printf("| pinned | %s |\n", r.pinned ? "yes (A on 1st allowed CPU, B on 2nd; DMA engine unpinned)"
                                             : (o.pin ? "requested but not possible" : "no"));
  std::printf("| spin budget | %" PRId64 " ns (Tripwire::wait spins this long, then sleeps)%s |\n",
              r.spin_ns, std::getenv("CLAN_SPIN_NS") ? " (CLAN_SPIN_NS)" : "");
  std::printf("| ping-pong | %" PRIu64 " round trips per transport = %d alternations x %" PRIu64
              ", each block after %" PRIu64 " warm-up round trips |\n",
              r.block * static_cast<uint64_t>(o.alternations), o.alternations, r.block, r.warm);
  std::printf("| streams | sizes 16 B .. 64 KiB; per point and repetition min(%s, %.2f s) after a "
              "calibration run; %d repetition(s), transports alternated |\n",
              bench::size_label(o.bw_bytes).c_str(), o.bw_seconds, o.reps);
  std::printf("| DMQ | ring %s, max message %s, payload written by the sender per message, every "
              "byte read by the receiver (checksum verified) |\n",
              bench::size_label(kRingBytes).c_str(), bench::size_label(kMaxMessage).c_str());
  std::printf("| compiler | %s |\n\n", m.compiler.c_str());
  std::fflush(stdout);
}

void print_tables(const Options& o, const Results& r) {
  const bench::Summary sp = bench::summarize(r.pio.all), sb = bench::summarize(r.bare.all),
                       su = bench::summarize(r.unix_.all);
  std::printf("## Single-word ping-pong, round trip (us)\n\n");
  std::printf("Round trips, not one-way. A writes a word into B's memory, B sees it and writes it "
              "back; A timestamps around the whole exchange.\n\n");
  std::printf("| transport | round trips | p50 | p90 | p99 | max | mean | p50 vs PIO |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  auto row = [&](const char* name, const bench::Summary& s) {
    std::printf("| %s | %zu | %s | %s | %s | %s | %s | %s |\n", name, s.count, bench::us(s.p50).c_str(),
                bench::us(s.p90).c_str(), bench::us(s.p99).c_str(), bench::us(s.max).c_str(),
                bench::us(s.mean).c_str(), sp.p50 > 0 ? bench::ratio(s.p50 / sp.p50).c_str() : "-");
  };
  row("bare cache line (floor)", sb);
  row("clan PIO write_word + tripwire", sp);
  row("unix socketpair, 8 B", su);
  std::printf("\nPIO round trips within 1.02 x p50: %.1f %%; wake-up system calls during the PIO "
              "blocks: %" PRIu64 " (both sides)\n\n",
              100.0 * bench::fraction_below(r.pio.all, static_cast<uint64_t>(sp.p50 * 1.02)), r.pio.wakes);

  std::printf("Per alternation (p50, us):\n\n| round | bare | PIO | unix | PIO / bare | unix / PIO |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|\n");
  for (size_t i = 0; i < r.pio.per_round.size(); ++i) {
    const double b = r.bare.per_round[i].p50, p = r.pio.per_round[i].p50, u = r.unix_.per_round[i].p50;
    std::printf("| %zu | %s | %s | %s | %s | %s |\n", i + 1, bench::us(b).c_str(), bench::us(p).c_str(),
                bench::us(u).c_str(), bench::ratio(p / b).c_str(), bench::ratio(u / p).c_str());
  }

  std::printf("\n## DMQ streaming bandwidth (MB/s = 10^6 B/s, payload bytes)\n\n");
  std::printf("Median over %d repetition(s), (min-max) when repeated. Single-thread memcpy, "
              "measured in this run: %s blocks far beyond the caches %s MB/s (%s): the memory "
              "bandwidth the targets and the '/ memcpy' columns use; a cache-resident %s block "
              "%s MB/s (%s), for scale: no copy between two cores can approach it.\n\n",
              o.reps, bench::size_label(kMemcpyLarge).c_str(),
              bench::mbs(bench::median(r.memcpy_large_bps)).c_str(), bw_cell(r.memcpy_large_bps).c_str(),
              bench::size_label(kMemcpyBlock).c_str(), bench::mbs(bench::median(r.memcpy_bps)).c_str(),
              bw_cell(r.memcpy_bps).c_str());
  std::printf("bare ring: the DMQ's framing in plain shared memory, pure spinning, no clan_emul (the "
              "floor). wakes/msg: futex wake-up system calls per message, both sides (median).\n\n");
  std::printf("| size | DMQ PIO | DMQ DMA | unix stream | bare ring | PIO / unix | DMA / unix | PIO / bare | "
              "PIO / memcpy | DMA / memcpy | wakes/msg PIO, DMA |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  const double mc = bench::median(r.memcpy_large_bps);
  for (uint64_t s : kSizes) {
    auto p = bw_values(r, "pio", s), d = bw_values(r, "dma", s), u = bw_values(r, "unix", s),
         b = bw_values(r, "bare", s);
    const double pm = bench::median(p), dm = bench::median(d), um = bench::median(u), bm = bench::median(b);
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", bench::size_label(s).c_str(),
                bw_cell(p).c_str(), bw_cell(d).c_str(), bw_cell(u).c_str(), bw_cell(b).c_str(),
                um > 0 ? bench::ratio(pm / um).c_str() : "-", um > 0 ? bench::ratio(dm / um).c_str() : "-",
                bm > 0 ? bench::ratio(pm / bm).c_str() : "-", bench::fmt("%.1f %%", 100 * pm / mc).c_str(),
                bench::fmt("%.1f %%", 100 * dm / mc).c_str(),
                (bench::fmt("%.2f, ", bench::median(wakes_per_msg(r, "pio", s))) +
                 bench::fmt("%.2f", bench::median(wakes_per_msg(r, "dma", s))))
                    .c_str());
  }

  const auto rpb = per_round_ratio(r.pio, r.bare), rup = per_round_ratio(r.unix_, r.pio);
  const double pio_bare = sp.p50 / sb.p50, unix_pio = su.p50 / sp.p50;
  const double pio64 = bench::median(bw_values(r, "pio", 65536)) / mc;
  const double pio64_cached = bench::median(bw_values(r, "pio", 65536)) / bench::median(r.memcpy_bps);
  const double dma64 = bench::median(bw_values(r, "dma", 65536)) / mc;
  std::printf("\n## Targets\n\n| figure | measured | target | status |\n|---|---|---|---|\n");
  std::printf("| PIO p50 / bare p50 (round trips) | %s%s | <= %.0fx | %s |\n", bench::ratio(pio_bare).c_str(),
              range(rpb).c_str(), kTargetPioOverBare, bench::met(pio_bare <= kTargetPioOverBare));
  std::printf("| unix p50 / PIO p50 (round trips) | %s%s | >= %.0fx | %s |\n", bench::ratio(unix_pio).c_str(),
              range(rup).c_str(), kTargetUnixOverPio, bench::met(unix_pio >= kTargetUnixOverPio));
  std::printf("| DMQ PIO 64 KiB / memcpy, large blocks (medians) | %.0f %%%s | >= %.0f %% | %s |\n", 100 * pio64,
              pct_range(per_rep_memcpy_ratio(r, "pio")).c_str(), 100 * kTargetDmqOverMemcpy,
              bench::met(pio64 >= kTargetDmqOverMemcpy));
  std::printf("| DMQ DMA 64 KiB / memcpy, large blocks (medians) | %.0f %%%s | >= %.0f %% | %s |\n", 100 * dma64,
              pct_range(per_rep_memcpy_ratio(r, "dma")).c_str(), 100 * kTargetDmqOverMemcpy,
              bench::met(dma64 >= kTargetDmqOverMemcpy));
  std::printf("| (for scale) DMQ PIO 64 KiB / memcpy of a cache-resident 64 KiB block | %.0f %% | - | - |\n",
              100 * pio64_cached);
  std::printf("\nPaper 000 (1999 hardware, for scale only): PIO round trip median 5.6 us; PIO "
              "bandwidth < 400 Mbit/s (50 MB/s) on the PC I/O bus.\n");
  std::fflush(stdout);
}

bool write_outputs(const Options& o, const Results& r) {
  if (mkdir(o.out.c_str(), 0755) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "bench_fabric: cannot create %s: %s\n", o.out.c_str(), std::strerror(errno));
    return false;
  }
  {
    std::ofstream f(o.out + "/fabric_latency.csv");
    f << "transport,bin_lo_ns,bin_hi_ns,count\n";
    auto hist = [&](const char* name, const LatencyResult& l) {
      bench::LogHistogram h;
      h.add_all(l.all);
      for (const auto& [lo, n] : h.bins()) f << name << ',' << lo << ',' << bench::LogHistogram::bin_hi(lo) << ',' << n << '\n';
    };
    hist("bare", r.bare);
    hist("pio", r.pio);
    hist("unix", r.unix_);
    if (!f) return false;
  }
  {
    std::ofstream f(o.out + "/fabric_bandwidth.csv");
    f << "transport,size_bytes,rep,messages,bytes,seconds,mb_per_s,wakes\n";
    for (const BwPoint& p : r.bw) {
      f << p.transport << ',' << p.size << ',' << p.rep << ',' << p.messages << ',' << p.bytes << ','
        << bench::fmt("%.6f", p.seconds) << ',' << bench::fmt("%.1f", p.bytes_per_s() / 1e6) << ',' << p.wakes
        << '\n';
    }
    for (size_t i = 0; i < r.memcpy_bps.size(); ++i) {
      f << "memcpy," << kMemcpyBlock << ',' << i << ",,,," << bench::fmt("%.1f", r.memcpy_bps[i] / 1e6) << ",\n";
    }
    for (size_t i = 0; i < r.memcpy_large_bps.size(); ++i) {
      f << "memcpy_large," << kMemcpyLarge << ',' << i << ",,,,"
        << bench::fmt("%.1f", r.memcpy_large_bps[i] / 1e6) << ",\n";
    }
    if (!f) return false;
  }
  {
    std::ofstream f(o.out + "/fabric.json");
    const bench::Summary sp = bench::summarize(r.pio.all), sb = bench::summarize(r.bare.all),
                         su = bench::summarize(r.unix_.all);
    const double mc = bench::median(r.memcpy_large_bps);  // the targets' reference
    f << "{\n  \"benchmark\": \"fabric\",\n  \"machine\": " << bench::json_machine(r.machine) << ",\n";
    f << "  \"config\": {\"pinned\": " << (r.pinned ? "true" : "false") << ", \"spin_budget_ns\": " << r.spin_ns
      << ", \"clock_overhead_ns\": " << bench::json_num(r.clock_ns) << ", \"alternations\": " << o.alternations
      << ", \"block_round_trips\": " << r.block << ", \"warmup_round_trips\": " << r.warm
      << ", \"stream_max_bytes\": " << o.bw_bytes << ", \"stream_max_seconds\": " << bench::json_num(o.bw_seconds)
      << ", \"repetitions\": " << o.reps << ", \"ring_bytes\": " << kRingBytes << ", \"max_message\": " << kMaxMessage
      << ", \"quick\": " << (o.quick ? "true" : "false") << "},\n";
    auto lat = [&](const char* name, const LatencyResult& l, const bench::Summary& s, bool last) {
      f << "    \"" << name << "\": {\"round_trip\": " << bench::json_summary(s) << ", \"per_round\": [";
      for (size_t i = 0; i < l.per_round.size(); ++i) f << (i ? ", " : "") << bench::json_summary(l.per_round[i]);
      f << "]}" << (last ? "\n" : ",\n");
    };
    f << "  \"latency\": {\n";
    lat("bare", r.bare, sb, false);
    lat("pio", r.pio, sp, false);
    lat("unix", r.unix_, su, true);
    f << "  },\n  \"bandwidth\": [\n";
    for (size_t i = 0; i < r.bw.size(); ++i) {
      const BwPoint& p = r.bw[i];
      f << "    {\"transport\": \"" << p.transport << "\", \"size\": " << p.size << ", \"rep\": " << p.rep
        << ", \"messages\": " << p.messages << ", \"bytes\": " << p.bytes
        << ", \"seconds\": " << bench::json_num(p.seconds) << ", \"mb_per_s\": " << bench::json_num(p.bytes_per_s() / 1e6)
        << ", \"wakes\": " << p.wakes << "}" << (i + 1 < r.bw.size() ? ",\n" : "\n");
    }
    f << "  ],\n  \"memcpy_64k_mb_per_s\": [";
    for (size_t i = 0; i < r.memcpy_bps.size(); ++i) f << (i ? ", " : "") << bench::json_num(r.memcpy_bps[i] / 1e6);
    f << "],\n  \"memcpy_large_mb_per_s\": [";
    for (size_t i = 0; i < r.memcpy_large_bps.size(); ++i)
      f << (i ? ", " : "") << bench::json_num(r.memcpy_large_bps[i] / 1e6);
    const double pio64 = bench::median(bw_values(r, "pio", 65536)) / mc;
    const double dma64 = bench::median(bw_values(r, "dma", 65536)) / mc;
    f << "],\n  \"targets\": [\n";
    const double pio_bare = sp.p50 / sb.p50, unix_pio = su.p50 / sp.p50;
    f << "    " << bench::json_target("pio_p50_over_bare_p50", bench::json_num(pio_bare), "<= 3",
                                    pio_bare <= kTargetPioOverBare) << ",\n";
    f << "    " << bench::json_target("unix_p50_over_pio_p50", bench::json_num(unix_pio), ">= 20",
                                    unix_pio >= kTargetUnixOverPio) << ",\n";
    f << "    " << bench::json_target("dmq_pio_64k_over_memcpy", bench::json_num(pio64), ">= 0.40",
                                    pio64 >= kTargetDmqOverMemcpy) << ",\n";
    f << "    " << bench::json_target("dmq_dma_64k_over_memcpy", bench::json_num(dma64), ">= 0.40",
                                    dma64 >= kTargetDmqOverMemcpy) << "\n";
    f << "  ]\n}\n";
    if (!f) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  // A dead peer must turn into an error message, not a silent SIGPIPE death.
  signal(SIGPIPE, SIG_IGN);
  if (o.spin_ns >= 0 && std::getenv("CLAN_SPIN_NS")) {
    // Nic::open lets CLAN_SPIN_NS override the config; the command line wins here.
    setenv("CLAN_SPIN_NS", std::to_string(o.spin_ns).c_str(), 1);
  }

  Shared sh;
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) die("mmap of the shared page failed");
  sh.bare = new (page) BarePage();
  void* ring = mmap(nullptr, kBareRingMap, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (ring == MAP_FAILED) die("mmap of the bare ring failed");
  sh.ring = new (ring) BareRingHeader();
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sh.unix_lat) != 0 ||
      socketpair(AF_UNIX, SOCK_STREAM, 0, sh.unix_stream) != 0) {
    die("socketpair failed");
  }
  bench::Channel ctl_a, ctl_b;
  if (!bench::Channel::make_pair(ctl_a, ctl_b)) die("control socketpair failed");

  Results res;
  res.machine = bench::machine_info();
  std::fflush(nullptr);
  bench::arm_watchdog(120);
  const pid_t peer = bench::spawn_peer([&] {
    ctl_a.reset();
    close(sh.unix_lat[0]);
    close(sh.unix_stream[0]);
    return run_peer(o, sh, std::move(ctl_b));
  });
  if (peer < 0) die("fork failed");
  g_peer = peer;
  ctl_b.reset();
  close(sh.unix_lat[1]);
  close(sh.unix_stream[1]);

  Driver drv(o, sh, std::move(ctl_a));
  drv.setup();
  res.spin_ns = drv.spin_budget().count();
  res.pinned = drv.pinned();
  res.clock_ns = bench::clock_overhead_ns();
  res.block = o.roundtrips / static_cast<uint64_t>(o.alternations);
  res.warm = std::max<uint64_t>(100, res.block / 10);
  print_header(o, res);

  // 1. Ping-pongs, alternated.
  for (int round = 0; round < o.alternations; ++round) {
    bench::arm_watchdog(120);
    std::vector<uint64_t> p, b, u;
    p.reserve(res.block);
    b.reserve(res.block);
    u.reserve(res.block);
    res.pio.wakes += drv.pio_block(res.warm, res.block, p);
    drv.bare_block(res.warm, res.block, b);
    drv.unix_block(res.warm, res.block, u);
    const auto sp = bench::summarize(p), sb = bench::summarize(b), su = bench::summarize(u);
    res.pio.per_round.push_back(sp);
    res.bare.per_round.push_back(sb);
    res.unix_.per_round.push_back(su);
    res.pio.all.insert(res.pio.all.end(), p.begin(), p.end());
    res.bare.all.insert(res.bare.all.end(), b.begin(), b.end());
    res.unix_.all.insert(res.unix_.all.end(), u.begin(), u.end());
    std::fprintf(stderr, "[pingpong] %d/%d  p50 us: bare %s  pio %s  unix %s  (p99: %s %s %s)\n", round + 1,
                 o.alternations, bench::us(sb.p50).c_str(), bench::us(sp.p50).c_str(), bench::us(su.p50).c_str(),
                 bench::us(sb.p99).c_str(), bench::us(sp.p99).c_str(), bench::us(su.p99).c_str());
  }

  // 2. Streams. Message counts are calibrated once per (transport, size)
  // by doubling a pilot run (which also warms up), then fixed for all reps.
  const Op ops[4] = {Op::kStreamPio, Op::kStreamDma, Op::kStreamUnix, Op::kStreamBare};
  std::vector<std::vector<uint64_t>> counts(4, std::vector<uint64_t>(kSizes.size(), 0));
  for (int rep = 0; rep < o.reps; ++rep) {
    for (size_t si = 0; si < kSizes.size(); ++si) {
      const uint64_t size = kSizes[si];
      std::string line;
      if (size == kMemcpyBlock) {
        // The baseline right next to the point it is compared with.
        bench::arm_watchdog(120);
        res.memcpy_bps.push_back(memcpy_bandwidth(kMemcpyBlock, o.memcpy_seconds));
        res.memcpy_large_bps.push_back(memcpy_bandwidth(kMemcpyLarge, o.memcpy_seconds));
        line += "  memcpy " + bench::mbs(res.memcpy_large_bps.back()) + " (cached 64K " +
                bench::mbs(res.memcpy_bps.back()) + ")";
      }
      for (int t = 0; t < 4; ++t) {
        bench::arm_watchdog(120);
        uint64_t& count = counts[t][si];
        const uint64_t cap = std::max<uint64_t>(1, o.bw_bytes / size);
        if (count == 0) {
          uint64_t n = std::min<uint64_t>(cap, 256);
          for (;;) {
            BwPoint pilot = drv.stream(ops[t], size, n);
            if (pilot.seconds >= o.pilot_seconds || n >= cap) {
              const double rate = static_cast<double>(n) / pilot.seconds;
              count = std::clamp<uint64_t>(static_cast<uint64_t>(rate * o.bw_seconds), 1, cap);
              break;
            }
            n = std::min(cap, n * 2);
          }
        }
        BwPoint p = drv.stream(ops[t], size, count);
        p.rep = rep;
        line += std::string("  ") + p.transport + " " + bench::mbs(p.bytes_per_s());
        if (p.transport == "pio" || p.transport == "dma") {
          line += bench::fmt(" (%.2f wakes/msg)", static_cast<double>(p.wakes) / static_cast<double>(p.messages));
        }
        res.bw.push_back(p);
      }
      std::fprintf(stderr, "[bw] rep %d/%d %7s MB/s:%s\n", rep + 1, o.reps, bench::size_label(size).c_str(),
                   line.c_str());
    }
  }
  bench::arm_watchdog(30);
  drv.quit();
  const int code = bench::reap_peer(peer, milliseconds(10000));
  g_peer = -1;
  bench::disarm_watchdog();
  if (code != 0) std::fprintf(stderr, "bench_fabric: peer exited with status %d\n", code);

  print_tables(o, res);
  if (!o.out.empty()) {
    if (!write_outputs(o, res)) {
      std::fprintf(stderr, "bench_fabric: cannot write results to %s\n", o.out.c_str());
      return 1;
    }
    std::fprintf(stderr, "bench_fabric: results in %s/fabric_latency.csv, fabric_bandwidth.csv, fabric.json\n",
                 o.out.c_str());
  }
  return code == 0 ? 0 : 1;
}
