// bench_via: the VIA benchmarks of paper 001 sect. 4 over via/ (the VIPL on
// the emulated CLAN network), between two real processes, with the raw
// clan_emul DMQ measured in the same run as the baseline.
//
//  1. Latency (Table 1): ping-pong, 0/4/40/128 bytes and 64 KiB, VIA with
//     TransferMode forced to PIO and to DMA (VipClanSetViAttributes), waiting
//     with VipRecvWait; beside it a raw DMQ ping-pong (DmqSender/DmqReceiver,
//     PIO). Alternated DMQ, VIA PIO, VIA DMA per size and round. Reported as
//     HALF round trips (round trip / 2), like the paper.
//  2. Bandwidth (Fig. 6): 16 B .. 64 KiB, 4 receive buffers posted, reliable
//     delivery; flow control by the receive descriptors themselves: the
//     receiver reposts a buffer after consuming it, the descriptor crosses in
//     the cookie queue (that is the credit) and the sender, with the
//     DeferSends extension (sect. 3.7.1), holds a send until one arrives.
//     VIA PIO, DMA, auto; raw DMQ PIO and DMA streams at the same sizes.
//  3. Completion queues (Fig. 7): the peer process is a server with one
//     receive CQ over 64 VIs; this process the client, with one outstanding
//     4-byte message on each of the first N connections; the server echoes
//     from its CQ loop. Messages/s through the CQ.
//
// Usage: bench_via [--quick] [--out DIR] [--pin | --no-pin] [--spin-ns N]
//                  [--only lat,bw,cq]
// By default A and B are pinned to two different CPUs (after the
// connections are made, so the DMA engine threads stay unpinned): on a
// 2-vCPU machine an unpinned ping-pong can settle with both processes on one
// CPU, where each waiter spins out its whole budget while the peer it waits
// for cannot run (half round trips of budget + wake-up, ~55 us, for the raw
// DMQ and VIA alike). The latency table reports futex sleeps per round trip
// and CPU sharing so such a regime is visible. --spin-ns sets CLAN_SPIN_NS
// for every NIC of both processes.
// Tables go to stdout (Markdown), progress to stderr; --out DIR writes
// DIR/via.csv and DIR/via.json (scripts/plot_via.py draws them). Targets are
// reported, never asserted: the exit status is non-zero only when something
// failed.
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/channel.hpp"
#include "bench/format.hpp"
#include "bench/histogram.hpp"
#include "bench/json.hpp"
#include "bench/machine.hpp"
#include "bench/peer.hpp"
#include "bench/pinning.hpp"
#include "bench/stats.hpp"
#include "clan_emul/dma_stream.hpp"
#include "clan_emul/dmq_layout.hpp"
#include "clan_emul/dmq_receiver.hpp"
#include "clan_emul/dmq_sender.hpp"
#include "clan_emul/futex.hpp"
#include "clan_emul/nic.hpp"
#include "via/vipl.h"

namespace {

using Clock = std::chrono::steady_clock;
using clan::Errc;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr size_t kMaxMessage = 64 * 1024;
constexpr size_t kRecvBuffers = 4;   // posted receive buffers (paper: four)
constexpr size_t kSendSlots = 16;    // send buffers/descriptors in flight (bandwidth)
// VIs on the server's CQ (paper 001 Fig. 7 goes to 64 connections), on a NIC
// of their own.
constexpr size_t kCqMax = 64;
constexpr uint32_t kCqMessage = 4;   // bytes per CQ request
constexpr uint32_t kStopMarker = 0xffffffffu;
constexpr VIP_ULONG kWaitMs = 10000;  // every VIPL wait is bounded

const std::vector<uint64_t> kLatSizes = {0, 4, 40, 128, 65536};
const std::vector<uint64_t> kBwSizes = {16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536};

constexpr double kTargetPioOverDmq = 2.0;   // VIA PIO 0-byte RT <= 2x raw DMQ RT
constexpr double kTargetBwShare = 0.50;     // VIA 64 KiB >= 50 % of raw DMQ
constexpr double kTargetCqKeep = 0.90;      // CQ rate at kCqMax >= 90 % of rate at 8 (noise margin)

struct Options {
  bool quick = false;
  bool pin = true;       // A on the first allowed CPU, B on the second
  int64_t spin_ns = -1;  // -1: the NicConfig default (or CLAN_SPIN_NS)
  bool lat = true, bw = true, cq = true;  // which tables to measure (--only)
  std::string out;
  uint64_t roundtrips = 20000;  // per latency point (64 KiB: a tenth)
  int rounds = 5;               // alternations of the latency blocks
  uint64_t bw_bytes = 10 * 1000 * 1000;  // at least this much per point (paper: 10 MB) ...
  double bw_seconds = 0.05;              // ... or this long, per repetition, whichever is less
  int bw_reps = 3;                       // repetitions per point, streams alternated
  double cq_seconds = 0.3;               // per point and repetition
  int cq_reps = 3;
  std::vector<int> cq_conns = {1, 2, 4, 8, 16, 32, 64};
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--quick] [--out DIR] [--pin | --no-pin] [--spin-ns N] [--only lat,bw,cq] "
               "[--cq-conns N,N,...]\n", argv0);
  std::exit(2);
}

// "1,8,64": connection counts for the CQ table, each 1 .. kCqMax; empty on error.
std::vector<int> parse_conns(const std::string& list) {
  std::vector<int> out;
  size_t at = 0;
  while (at <= list.size()) {
    const size_t comma = std::min(list.find(',', at), list.size());
    const std::string item = list.substr(at, comma - at);
    char* end = nullptr;
    const long n = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || !end || *end || n < 1 || n > static_cast<long>(kCqMax)) return {};
    out.push_back(static_cast<int>(n));
    at = comma + 1;
  }
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  std::vector<int> cq_conns;  // --cq-conns, applied after --quick's defaults
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick") {
      o.quick = true;
    } else if (a == "--out") {
      if (i + 1 >= argc) usage(argv[0]);
      o.out = argv[++i];
    } else if (a == "--pin") {
      o.pin = true;
    } else if (a == "--no-pin") {
      o.pin = false;
    } else if (a == "--spin-ns") {
      if (i + 1 >= argc) usage(argv[0]);
      char* end = nullptr;
      o.spin_ns = std::strtoll(argv[++i], &end, 10);
      if (!end || *end || o.spin_ns < 0) usage(argv[0]);
    } else if (a == "--only") {
      if (i + 1 >= argc) usage(argv[0]);
      const std::string list = argv[++i];
      o.lat = list.find("lat") != std::string::npos;
      o.bw = list.find("bw") != std::string::npos;
      o.cq = list.find("cq") != std::string::npos;
      if (!o.lat && !o.bw && !o.cq) usage(argv[0]);
    } else if (a == "--cq-conns") {
      if (i + 1 >= argc) usage(argv[0]);
      cq_conns = parse_conns(argv[++i]);
      if (cq_conns.empty()) usage(argv[0]);
    } else {
      usage(argv[0]);
    }
  }
  if (o.quick) {
    o.roundtrips = 2000;
    o.rounds = 2;
    o.bw_seconds = 0.01;
    o.bw_reps = 2;
    o.cq_seconds = 0.1;
    o.cq_reps = 2;
    o.cq_conns = {1, 8, 64};
  }
  if (!cq_conns.empty()) o.cq_conns = cq_conns;
  return o;
}

// ---------------------------------------------------------------------------
// Control protocol between the client/measuring process (A, the parent) and
// the server/echo process (B, the child).

enum class Op : uint32_t { kViaLat = 1, kDmqLat, kViaBw, kDmqBw, kCq, kQuit };

struct Command {
  Op op{};
  uint32_t mode = 0;  // VIP_CLAN_TRANSFER_*, or for DMQ: 0 PIO, 1 DMA
  uint64_t size = 0;
  uint64_t count = 0;  // round trips / messages / connections
};

// What one side did during a block: sleeps (voluntary context switches),
// futex wake-up system calls, and where it ran.
struct Activity {
  uint64_t sleeps = 0;
  uint64_t preempted = 0;  // involuntary context switches
  uint64_t wakes = 0;
  int32_t cpu_first = -1, cpu_last = -1;
};

struct Reply {
  int32_t status = 0;  // 0 ok, else a step number / VIP_RETURN
  uint32_t pad = 0;
  uint64_t count = 0;
  int64_t end_ns = 0;  // streams: steady_clock when the last message was consumed
  Activity act;
};

// Both sides' activity during one timed block of `exchanges` round trips.
struct BlockActivity {
  Activity a, b;
  uint64_t exchanges = 0;
  double sleeps_per_exchange() const {
    return exchanges ? static_cast<double>(a.sleeps + b.sleeps) / static_cast<double>(exchanges) : 0;
  }
  // Both processes were seen on the same CPU at the start or the end.
  bool shared_cpu() const {
    return (a.cpu_first >= 0 && a.cpu_first == b.cpu_first) || (a.cpu_last >= 0 && a.cpu_last == b.cpu_last);
  }
};

struct ActivityMeter {
  rusage r0{};
  uint64_t w0 = 0;
  int cpu0 = -1;
  ActivityMeter() {
    getrusage(RUSAGE_THREAD, &r0);
    w0 = clan::futex_wake_calls();
    cpu0 = sched_getcpu();
  }
  Activity done() const {
    rusage r1{};
    getrusage(RUSAGE_THREAD, &r1);
    Activity a;
    a.sleeps = static_cast<uint64_t>(r1.ru_nvcsw - r0.ru_nvcsw);
    a.preempted = static_cast<uint64_t>(r1.ru_nivcsw - r0.ru_nivcsw);
    a.wakes = clan::futex_wake_calls() - w0;
    a.cpu_first = cpu0;
    a.cpu_last = sched_getcpu();
    return a;
  }
};

struct Hello {
  clan::RdmaCookie tx;  // this side's DMQ sender (for the peer receiver's attach)
  clan::RdmaCookie rx;  // this side's DMQ receiver (for the peer sender's attach)
  int32_t status;
};

std::string g_node_a, g_node_b;  // OOB node names (= VIPL host names)
// Shared page (before fork): B stores the number of the command it is about
// to run once it is awake, and A spins until it sees it before timing, so a
// block does not start with both sides asleep (a wake-up takes longer than
// the spin budget, and two sleepers stay in that mode).
std::atomic<uint64_t>* g_go = nullptr;
bool g_pin = false;  // set before the fork, read by both sides

clan::DmqConfig dmq_config() {
  clan::DmqConfig c;
  c.ring_bytes = 256 * 1024;  // as much as 4 x 64 KiB receive buffers
  c.max_message = kMaxMessage;
  return c;
}

struct Address {
  alignas(8) unsigned char bytes[VIP_CLAN_NET_ADDRESS_BYTES] = {};
  VIP_NET_ADDRESS* get() { return reinterpret_cast<VIP_NET_ADDRESS*>(bytes); }
  Address(const std::string& host, const std::string& disc) {
    get()->HostAddressLen = static_cast<VIP_UINT16>(host.size());
    get()->DiscriminatorLen = static_cast<VIP_UINT16>(disc.size());
    std::memcpy(get()->HostAddress, host.data(), host.size());
    std::memcpy(get()->HostAddress + host.size(), disc.data(), disc.size());
  }
};

inline void put_seq(unsigned char* buf, uint64_t size, uint64_t seq) {
  if (size >= 8) std::memcpy(buf, &seq, 8);
}
inline bool seq_ok(const void* buf, uint64_t size, uint64_t seq) {
  if (size < 8) return true;
  uint64_t v;
  std::memcpy(&v, buf, 8);
  return v == seq;
}

// ---------------------------------------------------------------------------
// One side's VIPL resources: a NIC, the main VI (latency, bandwidth), and
// kCqMax VIs for the completion-queue test. Memory: `local` holds the
// descriptors and send buffers, `rx` the receive buffers (CLAN memory). The
// 4 main receive buffers share one allocation, as do the CQ ones, so with
// RevokeOnCompletion (the default) no cookie is ever reissued in these runs
// (another descriptor of the allocation is always still posted).

struct Side {
  VIP_NIC_HANDLE nic = nullptr;
  VIP_PROTECTION_HANDLE ptag = nullptr;
  VIP_CQ_HANDLE cq = nullptr;  // receive CQ of the CQ VIs
  unsigned char* local = nullptr;
  unsigned char* rx = nullptr;
  unsigned char* cq_rx = nullptr;
  VIP_MEM_HANDLE lmh = 0, rmh = 0, cmh = 0;
  VIP_VI_HANDLE vi = nullptr;
  std::vector<VIP_VI_HANDLE> cvis;
  std::unordered_map<VIP_VI_HANDLE, size_t> index;

  // local layout
  static constexpr size_t kDescBytes = 64;
  static constexpr size_t kMainRecvDesc = 0;                         // 4
  static constexpr size_t kMainSendDesc = kMainRecvDesc + kRecvBuffers;  // 16
  static constexpr size_t kCqRecvDesc = kMainSendDesc + kSendSlots;  // 2 per CQ VI
  static constexpr size_t kCqSendDesc = kCqRecvDesc + 2 * kCqMax;    // 1 per CQ VI
  static constexpr size_t kDescCount = kCqSendDesc + kCqMax;
  static constexpr size_t kSendOffset = ((kDescCount * kDescBytes + 4095) / 4096) * 4096;
  static constexpr size_t kCqSendOffset = kSendOffset + kSendSlots * kMaxMessage;
  static constexpr size_t kLocalBytes = kCqSendOffset + kCqMax * 64;
  static constexpr size_t kCqRecvBytes = 64;

  VIP_DESCRIPTOR* desc(size_t i) { return reinterpret_cast<VIP_DESCRIPTOR*>(local + i * kDescBytes); }
  unsigned char* send_buf(size_t k) { return local + kSendOffset + k * kMaxMessage; }
  unsigned char* cq_send_buf(size_t i) { return local + kCqSendOffset + i * 64; }
  unsigned char* rx_buf(size_t k) { return rx + k * kMaxMessage; }
  unsigned char* cq_rx_buf(size_t j) { return cq_rx + j * kCqRecvBytes; }

  static VIP_DESCRIPTOR* fill(VIP_DESCRIPTOR* d, void* buf, VIP_MEM_HANDLE bh, uint32_t len, bool recv) {
    std::memset(d, 0, sizeof *d);
    d->CS.Length = len;
    if (len > 0 || recv) {
      d->CS.SegCount = 1;
      d->DS[0].Local.Data.Address = buf;
      d->DS[0].Local.Handle = bh;
      d->DS[0].Local.Length = len;
    }
    return d;
  }
  VIP_DESCRIPTOR* main_recv(size_t k) { return fill(desc(kMainRecvDesc + k), rx_buf(k), rmh, kMaxMessage, true); }
  VIP_DESCRIPTOR* main_send(size_t k, uint32_t len) {
    return fill(desc(kMainSendDesc + k), send_buf(k), lmh, len, false);
  }
  VIP_DESCRIPTOR* cq_recv(size_t j) { return fill(desc(kCqRecvDesc + j), cq_rx_buf(j), cmh, kCqRecvBytes, true); }
  VIP_DESCRIPTOR* cq_send(size_t i, uint32_t len) {
    return fill(desc(kCqSendDesc + i), cq_send_buf(i), lmh, len, false);
  }
  size_t main_recv_slot(const VIP_DESCRIPTOR* d) const {
    return static_cast<size_t>((reinterpret_cast<const unsigned char*>(d) - local) / kDescBytes) - kMainRecvDesc;
  }
  size_t cq_recv_slot(const VIP_DESCRIPTOR* d) const {
    return static_cast<size_t>((reinterpret_cast<const unsigned char*>(d) - local) / kDescBytes) - kCqRecvDesc;
  }

  // Returns 0 or a step number.
  // main: the latency/bandwidth VI; else the CQ and its kCqMax VIs (on
  // another NIC: one NIC cannot hold 61 connected VIs).
  int open(const std::string& name, bool main) {
    if (VipOpenNic(name.c_str(), &nic) != VIP_SUCCESS) return 1;
    if (VipCreatePtag(nic, &ptag) != VIP_SUCCESS) return 2;
    void* p = nullptr;
    VIP_MEM_ATTRIBUTES ma{ptag, VIP_FALSE, VIP_FALSE};
    if (VipClanAllocMem(nic, kLocalBytes, &p) != VIP_SUCCESS) return 3;
    local = static_cast<unsigned char*>(p);
    if (VipRegisterMem(nic, local, kLocalBytes, &ma, &lmh) != VIP_SUCCESS) return 4;
    if (VipClanAllocMem(nic, kRecvBuffers * kMaxMessage, &p) != VIP_SUCCESS) return 5;
    rx = static_cast<unsigned char*>(p);
    if (VipRegisterMem(nic, rx, kRecvBuffers * kMaxMessage, &ma, &rmh) != VIP_SUCCESS) return 6;
    if (VipClanAllocMem(nic, 2 * kCqMax * kCqRecvBytes, &p) != VIP_SUCCESS) return 7;
    cq_rx = static_cast<unsigned char*>(p);
    if (VipRegisterMem(nic, cq_rx, 2 * kCqMax * kCqRecvBytes, &ma, &cmh) != VIP_SUCCESS) return 8;
    if (VipCreateCQ(nic, 4 * kCqMax, &cq) != VIP_SUCCESS) return 9;
    VIP_VI_ATTRIBUTES a{};
    a.ReliabilityLevel = VIP_SERVICE_RELIABLE_DELIVERY;
    a.MaxTransferSize = kMaxMessage;
    a.Ptag = ptag;
    if (main) {
      if (VipCreateVi(nic, &a, nullptr, nullptr, &vi) != VIP_SUCCESS) return 10;
      // Posted before the connection: they travel in the handshake.
      for (size_t k = 0; k < kRecvBuffers; ++k) {
        if (VipPostRecv(vi, main_recv(k), lmh) != VIP_SUCCESS) return 11;
      }
      return 0;
    }
    cvis.resize(kCqMax);
    for (size_t i = 0; i < kCqMax; ++i) {
      if (VipCreateVi(nic, &a, nullptr, cq, &cvis[i]) != VIP_SUCCESS) return 12;
      index[cvis[i]] = i;
      for (size_t j = 0; j < 2; ++j) {
        if (VipPostRecv(cvis[i], cq_recv(2 * i + j), lmh) != VIP_SUCCESS) return 13;
      }
    }
    return 0;
  }
  void close() {
    if (nic) VipCloseNic(nic);
    nic = nullptr;
  }
};

bool set_mode(VIP_VI_HANDLE vi, uint32_t mode) {
  VIP_CLAN_VI_ATTRIBUTES x{VIP_TRUE, VIP_FALSE, mode, 1024};
  return VipClanSetViAttributes(vi, &x) == VIP_SUCCESS;
}

std::string disc_of(size_t i) { return i == kCqMax ? std::string("main") : "q" + std::to_string(i); }

// ---------------------------------------------------------------------------
// The peer (B): echo server and receiver. Returns its exit code.

int run_peer(bench::Channel ctl) {
  Side s, q;
  if (int e = s.open(g_node_b + "m", true)) return 10 + e;
  if (int e = q.open(g_node_b + "q", false)) return 10 + e;
  auto nic_r = clan::Nic::open([] {
    clan::NicConfig c;
    c.name = g_node_b + "-raw";
    return c;
  }());
  if (!nic_r) return 30;
  clan::Nic& nic = *nic_r.value();
  auto tx_r = clan::DmqSender::create(nic, dmq_config());
  auto rx_r = clan::DmqReceiver::create(nic, dmq_config());
  if (!tx_r || !rx_r) return 31;
  clan::DmqSender& tx = *tx_r.value();
  clan::DmqReceiver& rx = *rx_r.value();

  // Start listening on every discriminator before the client asks.
  for (size_t i = 0; i <= kCqMax; ++i) {
    const bool m = i == kCqMax;
    Address local(g_node_b + (m ? "m" : "q"), disc_of(i)), out("", "");
    VIP_VI_ATTRIBUTES ra{};
    VIP_CONN_HANDLE c = nullptr;
    if (VipConnectWait(m ? s.nic : q.nic, local.get(), 0, out.get(), &ra, &c) != VIP_TIMEOUT) return 32;
  }
  Hello mine{tx.cookie(), rx.cookie(), 0};
  if (!ctl.put(mine)) return 33;
  Hello theirs{};
  if (!ctl.get(theirs, seconds(30)) || theirs.status != 0) return 34;
  if (tx.attach(theirs.rx) != Errc::kOk || rx.attach(theirs.tx) != Errc::kOk) return 35;
  for (size_t i = 0; i <= kCqMax; ++i) {
    const bool m = i == kCqMax;
    Address local(g_node_b + (m ? "m" : "q"), disc_of(i)), out("", "");
    VIP_VI_ATTRIBUTES ra{};
    VIP_CONN_HANDLE c = nullptr;
    if (VipConnectWait(m ? s.nic : q.nic, local.get(), 20000, out.get(), &ra, &c) != VIP_SUCCESS) return 36;
    if (VipConnectAccept(c, m ? s.vi : q.cvis[i]) != VIP_SUCCESS) return 37;
  }
  // Pinned after the connections: the DMA engine threads started with them
  // stay free to run on either CPU.
  Reply ready{};
  if (g_pin) {
    const int cpu = bench::nth_allowed_cpu(1);
    ready.act.cpu_first = cpu >= 0 && bench::pin_to_cpu(cpu) ? cpu : -1;
  }
  if (!ctl.put(ready)) return 38;

  std::vector<std::byte> zero(kMaxMessage);
  for (;;) {
    Command c{};
    if (!ctl.get(c, seconds(300))) return 40;
    if (c.op == Op::kQuit) break;
    Reply r{};
    const clan::Deadline dl = clan::Deadline::after(seconds(60));
    const ActivityMeter meter;
    g_go->fetch_add(1, std::memory_order_release);
    auto fail = [&](int32_t code) {
      r.status = code;
      ctl.put(r);
      return 50;
    };
    switch (c.op) {
      case Op::kViaLat: {
        if (!set_mode(s.vi, c.mode)) return fail(1);
        for (uint64_t i = 0; i < c.count; ++i) {
          VIP_DESCRIPTOR* d = nullptr;
          VIP_RETURN e = VipRecvWait(s.vi, kWaitMs, &d);
          if (e != VIP_SUCCESS) return fail(100 + e);
          const uint32_t len = d->CS.Length;
          if (VipPostSend(s.vi, s.main_send(0, len), s.lmh) != VIP_SUCCESS) return fail(2);
          if (VipPostRecv(s.vi, s.main_recv(s.main_recv_slot(d)), s.lmh) != VIP_SUCCESS) return fail(3);
          VIP_DESCRIPTOR* sd = nullptr;
          e = VipSendWait(s.vi, kWaitMs, &sd);
          if (e != VIP_SUCCESS) return fail(200 + e);
        }
        r.count = c.count;
        break;
      }
      case Op::kDmqLat: {
        for (uint64_t i = 0; i < c.count; ++i) {
          auto m = rx.receive(dl);
          if (!m) return fail(300 + static_cast<int32_t>(m.error()));
          const size_t len = m->size;
          if (Errc e = tx.send(zero.data(), len, dl, clan::Transfer::kPio); e != Errc::kOk) {
            return fail(400 + static_cast<int32_t>(e));
          }
          if (rx.release() != Errc::kOk) return fail(4);
        }
        r.count = c.count;
        break;
      }
      case Op::kViaBw: {
        if (!set_mode(s.vi, c.mode)) return fail(1);
        for (uint64_t i = 0; i < c.count; ++i) {
          VIP_DESCRIPTOR* d = nullptr;
          VIP_RETURN e = VipRecvWait(s.vi, kWaitMs, &d);
          if (e != VIP_SUCCESS) return fail(100 + e);
          const size_t slot = s.main_recv_slot(d);
          if (d->CS.Length != c.size || !seq_ok(s.rx_buf(slot), c.size, i)) return fail(5);
          if (VipPostRecv(s.vi, s.main_recv(slot), s.lmh) != VIP_SUCCESS) return fail(3);
        }
        r.count = c.count;
        r.end_ns = Clock::now().time_since_epoch().count();
        break;
      }
      case Op::kDmqBw: {
        for (uint64_t i = 0; i < c.count; ++i) {
          auto m = rx.receive(dl);
          if (!m) return fail(300 + static_cast<int32_t>(m.error()));
          if (m->size != c.size || !seq_ok(m->data, c.size, i)) return fail(5);
          if (rx.release() != Errc::kOk) return fail(4);
        }
        r.count = c.count;
        r.end_ns = Clock::now().time_since_epoch().count();
        break;
      }
      case Op::kCq: {
        const size_t n = static_cast<size_t>(c.count);
        for (size_t i = 0; i < n; ++i) {
          if (!set_mode(q.cvis[i], c.mode)) return fail(1);
        }
        std::vector<bool> pending(kCqMax, false);
        if (!ctl.put(r)) return 41;  // ready
        uint64_t echoed = 0;
        for (;;) {
          VIP_VI_HANDLE vi = nullptr;
          VIP_BOOLEAN is_recv = VIP_FALSE;
          VIP_RETURN e = VipCQWait(q.cq, kWaitMs, &vi, &is_recv);
          if (e != VIP_SUCCESS) return fail(500 + e);
          if (!is_recv) continue;
          VIP_DESCRIPTOR* d = nullptr;
          e = VipRecvDone(vi, &d);
          if (e != VIP_SUCCESS) return fail(600 + e);
          const bool stop = (d->CS.Status & VIP_STATUS_IMMEDIATE) && d->CS.ImmediateData == kStopMarker;
          const size_t idx = q.index.at(vi);
          const uint32_t len = d->CS.Length;
          if (!stop) {
            if (pending[idx]) {
              VIP_DESCRIPTOR* sd = nullptr;
              e = VipSendWait(vi, kWaitMs, &sd);
              if (e != VIP_SUCCESS) return fail(700 + e);
            }
            if (VipPostSend(vi, q.cq_send(idx, len), q.lmh) != VIP_SUCCESS) return fail(6);
            pending[idx] = true;
            ++echoed;
          }
          if (VipPostRecv(vi, q.cq_recv(q.cq_recv_slot(d)), q.lmh) != VIP_SUCCESS) return fail(7);
          if (stop) break;
        }
        for (size_t i = 0; i < kCqMax; ++i) {
          if (!pending[i]) continue;
          VIP_DESCRIPTOR* sd = nullptr;
          if (VipSendWait(q.cvis[i], kWaitMs, &sd) != VIP_SUCCESS) return fail(8);
        }
        r.count = echoed;
        break;
      }
      default:
        return fail(9);
    }
    r.act = meter.done();
    if (!ctl.put(r)) return 42;
  }
  q.close();
  s.close();
  return 0;
}

// ---------------------------------------------------------------------------
// The measuring side (A)

pid_t g_peer = -1;
std::string g_runtime_dir;

void cleanup_runtime() {
  if (!g_runtime_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(g_runtime_dir, ec);
  }
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "bench_via: error: %s\n", what.c_str());
  if (g_peer > 0) {
    kill(g_peer, SIGKILL);
    int code = bench::reap_peer(g_peer, milliseconds(2000));
    std::fprintf(stderr, "bench_via: peer exit status %d\n", code);
  }
  cleanup_runtime();
  std::exit(1);
}

inline uint64_t ns_between(Clock::time_point a, Clock::time_point b) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}

struct LatSeries {
  std::string name;  // "dmq", "via_pio", "via_dma"
  uint64_t size = 0;
  std::vector<uint64_t> rt;  // round trips, ns
  std::vector<double> round_p50;  // per alternation, round trip ns
  uint64_t sleeps = 0, exchanges = 0;  // both sides, all blocks (warm-ups included)
  int shared_cpu_blocks = 0;            // blocks that began or ended with A and B on one CPU
  double sleeps_per_rt() const { return exchanges ? static_cast<double>(sleeps) / static_cast<double>(exchanges) : 0; }
};

struct BwPoint {
  std::string name;  // via_pio, via_dma, via_auto, dmq_pio, dmq_dma
  int rep = 0;
  uint64_t size = 0, messages = 0;
  double seconds = 0;
  BlockActivity act;
  double mbs() const { return seconds > 0 ? static_cast<double>(messages * size) / seconds / 1e6 : 0; }
};

struct CqPoint {
  std::string name;  // pio, dma
  int rep = 0;
  int conns = 0;
  uint64_t messages = 0;
  double seconds = 0;
  uint64_t server_echoes = 0;
  double rate() const { return seconds > 0 ? static_cast<double>(messages) / seconds : 0; }
};

class Driver {
 public:
  Driver(const Options& o, bench::Channel ctl) : o_(o), ctl_(std::move(ctl)) {}

  void setup() {
    if (int e = s_.open(g_node_a + "m", true)) die("VIPL setup failed at step " + std::to_string(e));
    if (int e = q_.open(g_node_a + "q", false)) die("VIPL setup (CQ NIC) failed at step " + std::to_string(e));
    clan::NicConfig nc;
    nc.name = g_node_a + "-raw";
    auto nic = clan::Nic::open(nc);
    if (!nic) die(std::string("Nic::open: ") + clan::to_string(nic.error()));
    nic_ = std::move(nic.value());
    spin_ns_ = nic_->spin_budget().count();
    auto tx = clan::DmqSender::create(*nic_, dmq_config());
    auto rx = clan::DmqReceiver::create(*nic_, dmq_config());
    if (!tx || !rx) die("DMQ create failed");
    tx_ = std::move(tx.value());
    rx_ = std::move(rx.value());
    (void)tx_->dma();  // starts the NIC's DMA engine thread now, before any pinning
    Hello theirs{};
    if (!ctl_.get(theirs, seconds(30))) die("no hello from the peer");
    if (theirs.status != 0) die("peer setup failed");
    Hello mine{tx_->cookie(), rx_->cookie(), 0};
    if (!ctl_.put(mine)) die("cannot send hello");
    if (tx_->attach(theirs.rx) != Errc::kOk || rx_->attach(theirs.tx) != Errc::kOk) die("DMQ attach failed");
    const auto t0 = Clock::now();
    for (size_t i = 0; i <= kCqMax; ++i) {
      const bool m = i == kCqMax;
      Address local("", "a"), remote(g_node_b + (m ? "m" : "q"), disc_of(i));
      VIP_VI_ATTRIBUTES ra{};
      VIP_RETURN e = VipConnectRequest(m ? s_.vi : q_.cvis[i], local.get(), remote.get(), 20000, &ra);
      if (e != VIP_SUCCESS) die("VipConnectRequest " + disc_of(i) + ": " + std::to_string(e));
    }
    Reply ready{};
    if (!ctl_.get(ready, seconds(60)) || ready.status != 0) die("peer could not accept the connections");
    connect_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (g_pin) {
      const int cpu = bench::nth_allowed_cpu(0);
      pinned_ = ready.act.cpu_first >= 0 && cpu >= 0 && cpu != ready.act.cpu_first && bench::pin_to_cpu(cpu);
    }
    if (!set_mode(s_.vi, VIP_CLAN_TRANSFER_AUTO)) die("VipClanSetViAttributes failed");
  }

  int64_t spin_ns() const { return spin_ns_; }
  bool pinned() const { return pinned_; }
  double connect_ms() const { return connect_ms_; }

  void command(const Command& c, const char* what) {
    if (!ctl_.put(c)) die(std::string("cannot send command for ") + what);
    ++commands_;
    if (c.op == Op::kQuit) return;
    const clan::Deadline dl = clan::Deadline::after(seconds(30));
    for (uint32_t n = 0; g_go->load(std::memory_order_acquire) != commands_;) {
      clan::cpu_relax();
      if ((++n & 0xffff) == 0 && dl.expired()) die(std::string("no handshake from the peer for ") + what);
    }
  }
  Reply await(const std::string& what, seconds limit = seconds(120)) {
    Reply r{};
    if (!ctl_.get(r, limit)) die("no reply from the peer after " + what);
    if (r.status != 0) die("peer failed in " + what + ": status " + std::to_string(r.status));
    return r;
  }
  void quit() {
    Command c{};
    c.op = Op::kQuit;
    command(c, "quit");
  }

  // VIA ping-pong: each sample is one whole iteration: post the send; while
  // it is on its way, repost the previous echo's receive buffer and reap the
  // send descriptor; wait for the echo. Paper 001 sect. 4 times what a
  // message needs (posting the send, its transfer, completion at the
  // receiver): the bookkeeping is done, and timed, but in the flight, as a
  // VIA application would do it. Four receive buffers are posted, so the
  // echo always finds one.
  BlockActivity via_lat(uint32_t mode, uint64_t size, uint64_t warm, uint64_t count, std::vector<uint64_t>& out) {
    if (!set_mode(s_.vi, mode)) die("VipClanSetViAttributes failed");
    command({Op::kViaLat, mode, size, warm + count}, "via latency");
    const ActivityMeter meter;
    const uint32_t len = static_cast<uint32_t>(size);
    VIP_DESCRIPTOR* echoed = nullptr;  // the last echo's receive descriptor, reposted in the next flight
    for (uint64_t i = 0; i < warm + count; ++i) {
      const auto t0 = Clock::now();
      VIP_RETURN e = VipPostSend(s_.vi, s_.main_send(0, len), s_.lmh);
      if (e != VIP_SUCCESS) die("VipPostSend: " + std::to_string(e));
      if (echoed && VipPostRecv(s_.vi, s_.main_recv(s_.main_recv_slot(echoed)), s_.lmh) != VIP_SUCCESS) {
        die("VipPostRecv");
      }
      VIP_DESCRIPTOR* sd = nullptr;
      e = VipSendWait(s_.vi, kWaitMs, &sd);
      if (e != VIP_SUCCESS) die("VipSendWait: " + std::to_string(e));
      e = VipRecvWait(s_.vi, kWaitMs, &echoed);
      if (e != VIP_SUCCESS) die("VipRecvWait: " + std::to_string(e));
      if (echoed->CS.Length != len) die("echo of the wrong length");
      const auto t1 = Clock::now();
      if (i >= warm) out.push_back(ns_between(t0, t1));
    }
    if (echoed && VipPostRecv(s_.vi, s_.main_recv(s_.main_recv_slot(echoed)), s_.lmh) != VIP_SUCCESS) {
      die("VipPostRecv");
    }
    const Activity mine = meter.done();
    return {mine, await("via latency").act, warm + count};
  }

  BlockActivity dmq_lat(uint64_t size, uint64_t warm, uint64_t count, std::vector<uint64_t>& out) {
    command({Op::kDmqLat, 0, size, warm + count}, "dmq latency");
    const ActivityMeter meter;
    const clan::Deadline dl = clan::Deadline::after(seconds(60));
    const unsigned char* buf = s_.send_buf(1);
    for (uint64_t i = 0; i < warm + count; ++i) {
      const auto t0 = Clock::now();
      if (Errc e = tx_->send(buf, size, dl, clan::Transfer::kPio); e != Errc::kOk) {
        die(std::string("DMQ send: ") + clan::to_string(e));
      }
      auto m = rx_->receive(dl);
      if (!m) die(std::string("DMQ receive: ") + clan::to_string(m.error()));
      if (m->size != size) die("DMQ echo of the wrong length");
      if (rx_->release() != Errc::kOk) die("DMQ release failed");
      const auto t1 = Clock::now();
      if (i >= warm) out.push_back(ns_between(t0, t1));
    }
    const Activity mine = meter.done();
    return {mine, await("dmq latency").act, warm + count};
  }

  // VIA stream: kSendSlots sends in flight at most; sends beyond the
  // receiver's posted descriptors wait in the VI (DeferSends).
  BwPoint via_bw(uint32_t mode, uint64_t size, uint64_t count) {
    if (!set_mode(s_.vi, mode)) die("VipClanSetViAttributes failed");
    command({Op::kViaBw, mode, size, count}, "via bandwidth");
    const uint32_t len = static_cast<uint32_t>(size);
    const ActivityMeter meter;
    const auto t0 = Clock::now();
    uint64_t reaped = 0;
    auto reap = [&] {
      VIP_DESCRIPTOR* sd = nullptr;
      VIP_RETURN e = VipSendWait(s_.vi, kWaitMs, &sd);
      if (e != VIP_SUCCESS) die("VipSendWait (stream): " + std::to_string(e));
      ++reaped;
    };
    for (uint64_t m = 0; m < count; ++m) {
      if (m >= kSendSlots) reap();
      const size_t k = m % kSendSlots;
      put_seq(s_.send_buf(k), size, m);
      VIP_RETURN e = VipPostSend(s_.vi, s_.main_send(k, len), s_.lmh);
      if (e != VIP_SUCCESS) die("VipPostSend (stream): " + std::to_string(e));
    }
    while (reaped < count) reap();
    return bw_point("via bandwidth", size, count, t0, meter.done());
  }

  BwPoint dmq_bw(bool dma, uint64_t size, uint64_t count) {
    command({Op::kDmqBw, dma ? 1u : 0u, size, count}, "dmq bandwidth");
    const clan::Deadline dl = clan::Deadline::after(seconds(60));
    const ActivityMeter meter;
    const auto t0 = Clock::now();
    if (!dma) {
      unsigned char* buf = s_.send_buf(0);
      for (uint64_t m = 0; m < count; ++m) {
        put_seq(buf, size, m);
        if (Errc e = tx_->send(buf, size, dl, clan::Transfer::kPio); e != Errc::kOk) {
          die(std::string("DMQ PIO send: ") + clan::to_string(e));
        }
      }
    } else {
      std::vector<uint64_t> tickets(kSendSlots, 0);
      clan::DmaStream& dmas = tx_->dma();
      uint64_t last = 0;
      for (uint64_t m = 0; m < count; ++m) {
        const size_t b = m % kSendSlots;
        if (tickets[b] != 0 && !dmas.done(tickets[b])) {
          if (Errc e = dmas.wait(tickets[b], dl); e != Errc::kOk) die(std::string("DMA wait: ") + clan::to_string(e));
        }
        put_seq(s_.send_buf(b), size, m);
        auto t = tx_->send_dma_async(s_.send_buf(b), size, dl);
        if (!t) die(std::string("DMQ DMA send: ") + clan::to_string(t.error()));
        tickets[b] = last = t.value();
      }
      if (last) {
        if (Errc e = dmas.wait(last, dl); e != Errc::kOk) die(std::string("DMA wait: ") + clan::to_string(e));
      }
    }
    return bw_point("dmq bandwidth", size, count, t0, meter.done());
  }

  // A stream that A started at t0 and B has consumed: B's report as a point.
  BwPoint bw_point(const char* what, uint64_t size, uint64_t count, Clock::time_point t0,
                   const Activity& mine) {
    Reply r = await(what);
    if (r.count != count) die(std::string(what) + ": message count mismatch");
    BwPoint p;
    p.size = size;
    p.messages = count;
    // Both processes read the same steady_clock (CLOCK_MONOTONIC).
    p.seconds = static_cast<double>(r.end_ns - t0.time_since_epoch().count()) * 1e-9;
    p.act = {mine, r.act, count};
    return p;
  }

  // The CQ client: one outstanding request on each of the first n
  // connections; echoes are taken from this side's own receive CQ and the
  // request re-sent on the same connection. Counted after a warm-up tenth.
  CqPoint cq(uint32_t mode, int n, double secs) {
    const size_t nc = static_cast<size_t>(n);
    for (size_t i = 0; i < nc; ++i) {
      if (!set_mode(q_.cvis[i], mode)) die("VipClanSetViAttributes failed");
    }
    command({Op::kCq, mode, kCqMessage, static_cast<uint64_t>(n)}, "cq");
    await("cq setup");
    std::vector<bool> pending(kCqMax, false);
    auto send = [&](size_t i, uint32_t imm) {
      if (pending[i]) {
        VIP_DESCRIPTOR* sd = nullptr;
        VIP_RETURN e = VipSendWait(q_.cvis[i], kWaitMs, &sd);
        if (e != VIP_SUCCESS) die("VipSendWait (cq): " + std::to_string(e));
      }
      VIP_DESCRIPTOR* d = q_.cq_send(i, kCqMessage);
      if (imm) {
        d->CS.Control = VIP_CONTROL_IMMEDIATE;
        d->CS.ImmediateData = imm;
      }
      VIP_RETURN e = VipPostSend(q_.cvis[i], d, q_.lmh);
      if (e != VIP_SUCCESS) die("VipPostSend (cq): " + std::to_string(e));
      pending[i] = true;
    };
    for (size_t i = 0; i < nc; ++i) send(i, 0);
    size_t outstanding = nc;
    const auto t0 = Clock::now();
    const auto t_warm = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(secs / 10));
    const auto t_end = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(secs * 1.1));
    bool counting = false, stopping = false;
    Clock::time_point t_count{}, t_stop{};
    uint64_t counted = 0, checks = 0;
    while (outstanding > 0) {
      VIP_VI_HANDLE vi = nullptr;
      VIP_BOOLEAN is_recv = VIP_FALSE;
      VIP_RETURN e = VipCQWait(q_.cq, kWaitMs, &vi, &is_recv);
      if (e != VIP_SUCCESS) die("VipCQWait (client): " + std::to_string(e));
      if (!is_recv) continue;
      VIP_DESCRIPTOR* d = nullptr;
      e = VipRecvDone(vi, &d);
      if (e != VIP_SUCCESS) die("VipRecvDone (client): " + std::to_string(e));
      const size_t idx = q_.index.at(vi);
      if (VipPostRecv(vi, q_.cq_recv(q_.cq_recv_slot(d)), q_.lmh) != VIP_SUCCESS) die("VipPostRecv (client)");
      if (counting && !stopping) ++counted;
      if ((++checks & 15) == 0 || nc < 16) {
        const auto now = Clock::now();
        if (!counting && now >= t_warm) {
          counting = true;
          t_count = now;
        } else if (counting && !stopping && now >= t_end) {
          stopping = true;
          t_stop = now;
        }
      }
      if (stopping) {
        --outstanding;
      } else {
        send(idx, 0);
      }
    }
    send(0, kStopMarker);
    Reply r = await("cq");
    for (size_t i = 0; i < nc; ++i) {
      VIP_DESCRIPTOR* sd = nullptr;
      if (pending[i] && VipSendWait(q_.cvis[i], kWaitMs, &sd) != VIP_SUCCESS) die("VipSendWait (cq drain)");
    }
    CqPoint p;
    p.conns = n;
    p.messages = counted;
    p.seconds = std::chrono::duration<double>(t_stop - t_count).count();
    p.server_echoes = r.count;
    return p;
  }

 private:
  const Options& o_;
  bench::Channel ctl_;
  Side s_, q_;  // the main VI's NIC, the CQ NIC
  std::unique_ptr<clan::Nic> nic_;
  std::unique_ptr<clan::DmqSender> tx_;
  std::unique_ptr<clan::DmqReceiver> rx_;
  int64_t spin_ns_ = 0;
  bool pinned_ = false;
  double connect_ms_ = 0;
  uint64_t commands_ = 0;
};

// ---------------------------------------------------------------------------
// Results and output

struct Results {
  bench::MachineInfo machine;
  int64_t spin_ns = 0;
  bool pinned = false;
  double clock_ns = 0, connect_ms = 0;
  std::vector<LatSeries> lat;
  std::vector<BwPoint> bw;
  std::vector<CqPoint> cq;
};

LatSeries& series(Results& r, const std::string& name, uint64_t size) {
  for (auto& s : r.lat) {
    if (s.name == name && s.size == size) return s;
  }
  r.lat.push_back(LatSeries{name, size, {}, {}});
  return r.lat.back();
}
const LatSeries* find_series(const Results& r, const std::string& name, uint64_t size) {
  for (const auto& s : r.lat) {
    if (s.name == name && s.size == size) return &s;
  }
  return nullptr;
}
// Half round trip summary (ns).
bench::Summary half(const LatSeries* s) {
  bench::Summary h = s ? bench::summarize(s->rt) : bench::Summary{};
  h.min /= 2;
  h.p50 /= 2;
  h.p90 /= 2;
  h.p99 /= 2;
  h.max /= 2;
  h.mean /= 2;
  return h;
}
// Medians over the repetitions (0 if not measured).
std::vector<double> bw_all(const Results& r, const std::string& name, uint64_t size) {
  std::vector<double> v;
  for (const auto& p : r.bw) {
    if (p.name == name && p.size == size) v.push_back(p.mbs());
  }
  return v;
}
double bw_of(const Results& r, const std::string& name, uint64_t size) { return bench::median(bw_all(r, name, size)); }
double bw_sleeps(const Results& r, const std::string& name, uint64_t size) {
  std::vector<double> v;
  for (const auto& p : r.bw) {
    if (p.name == name && p.size == size) v.push_back(p.act.sleeps_per_exchange());
  }
  return bench::median(v);
}
std::vector<double> cq_all(const Results& r, const std::string& name, int conns) {
  std::vector<double> v;
  for (const auto& p : r.cq) {
    if (p.name == name && p.conns == conns) v.push_back(p.rate());
  }
  return v;
}
double cq_of(const Results& r, const std::string& name, int conns) { return bench::median(cq_all(r, name, conns)); }

struct Targets {
  double pio_over_dmq = 0;
  bool pio_beats_dma = false;
  std::string pio_dma_detail;
  double dma_over_pio_64k_bw = 0;
  double dma_over_pio_64k_lat = 0;
  double bw_share = 0, bw_share_pio = 0, bw_share_dma = 0;
  double cq_keep_pio = 0, cq_keep_dma = 0;
};

Targets targets(const Results& r) {
  Targets t;
  const double d0 = half(find_series(r, "dmq", 0)).p50, p0 = half(find_series(r, "via_pio", 0)).p50;
  t.pio_over_dmq = d0 > 0 ? p0 / d0 : 0;
  t.pio_beats_dma = true;
  for (uint64_t s : kLatSizes) {
    if (s > 128) continue;
    const double p = half(find_series(r, "via_pio", s)).p50, d = half(find_series(r, "via_dma", s)).p50;
    if (!(p < d)) t.pio_beats_dma = false;
    t.pio_dma_detail += (t.pio_dma_detail.empty() ? "" : ", ") + std::to_string(s) + " B " + bench::ratio(d / p);
  }
  const double bp = bw_of(r, "via_pio", 65536), bd = bw_of(r, "via_dma", 65536);
  t.dma_over_pio_64k_bw = bp > 0 ? bd / bp : 0;
  const double lp = half(find_series(r, "via_pio", 65536)).p50, ld = half(find_series(r, "via_dma", 65536)).p50;
  t.dma_over_pio_64k_lat = ld > 0 ? lp / ld : 0;
  const double qp = bw_of(r, "dmq_pio", 65536), qd = bw_of(r, "dmq_dma", 65536);
  const double via_best = std::max({bp, bd, bw_of(r, "via_auto", 65536)}), dmq_best = std::max(qp, qd);
  t.bw_share = dmq_best > 0 ? via_best / dmq_best : 0;
  t.bw_share_pio = qp > 0 ? bp / qp : 0;
  t.bw_share_dma = qd > 0 ? bd / qd : 0;
  const double c8p = cq_of(r, "pio", 8), c8d = cq_of(r, "dma", 8);
  t.cq_keep_pio = c8p > 0 ? cq_of(r, "pio", static_cast<int>(kCqMax)) / c8p : 0;
  t.cq_keep_dma = c8d > 0 ? cq_of(r, "dma", static_cast<int>(kCqMax)) / c8d : 0;
  return t;
}

// Per-round ratio of two latency series' p50 (same round, same size): min, max.
std::pair<double, double> round_ratio_range(const Results& r, const std::string& num, const std::string& den,
                                            uint64_t size) {
  const LatSeries *a = find_series(r, num, size), *b = find_series(r, den, size);
  if (!a || !b) return {0, 0};
  std::vector<double> v;
  for (size_t i = 0; i < std::min(a->round_p50.size(), b->round_p50.size()); ++i) {
    if (b->round_p50[i] > 0) v.push_back(a->round_p50[i] / b->round_p50[i]);
  }
  return {bench::min_of(v), bench::max_of(v)};
}

std::string range_of(const std::vector<double>& v, const char* f) {
  if (v.size() < 2) return "";
  return " (" + bench::fmt(f, bench::min_of(v)) + "-" + bench::fmt(f, bench::max_of(v)) + ")";
}

void print_tables(const Options& o, const Results& r) {
  const auto& m = r.machine;
  std::printf("# VIA benchmarks (paper 001 sect. 4) over via/ on clan_emul\n\n");
  std::printf("| | |\n|---|---|\n");
  std::printf("| date | %s |\n| CPU | %s |\n| cores | %ld online, %d allowed |\n| kernel | %s, clocksource %s |\n",
              m.date_utc.c_str(), m.cpu_model.c_str(), m.cores_online, m.cores_allowed, m.kernel.c_str(),
              m.clocksource.c_str());
  std::printf("| pinned | %s |\n",
              r.pinned ? "yes: A (client, sender) on the 1st allowed CPU, B (server, receiver) on the 2nd; DMA engine "
                         "threads unpinned. Same for VIA and the raw DMQ"
                       : (o.pin ? "requested but not possible" : "no (--no-pin)"));
  std::printf("| spin budget | %lld ns%s, then futex sleep; the same for every NIC of both processes (VIA and raw DMQ) |\n",
              static_cast<long long>(r.spin_ns),
              o.spin_ns >= 0 ? " (--spin-ns)" : std::getenv("CLAN_SPIN_NS") ? " (CLAN_SPIN_NS)" : " (clan_emul default)");
  std::printf("| processes | two (fork, NICs opened after fork); reliable delivery; RevokeOnCompletion on (receive buffers "
              "share an allocation, so no cookie is reissued) |\n");
  std::printf("| mode | %s; clock overhead %.0f ns per timestamp; %zu connections set up in %.0f ms |\n\n",
              o.quick ? "--quick" : "default", r.clock_ns, kCqMax + 1, r.connect_ms);

  if (o.lat) {
    std::printf("## Latency (paper 001 Table 1): HALF round trips, us\n\n");
    std::printf("Ping-pong; one sample = one whole round trip, halved: post the send; while it is on its way, "
                "repost the previous echo's receive buffer and reap the send with VipSendWait; VipRecvWait for "
                "the echo. The peer waits, echoes, then reposts and reaps. "
                "%llu round trips per point (64 KiB: %llu), in %d alternating rounds of raw DMQ, VIA PIO, VIA "
                "DMA, each after a warm-up. Raw DMQ: DmqSender::send (PIO) / DmqReceiver::receive. "
                "Paper (650 MHz PIII, real CLAN): PIO 3.4/4.6/4.7, DMA 4.4/6.4/6.8 us for 0/4/40 B.\n\n",
                static_cast<unsigned long long>(o.roundtrips),
                static_cast<unsigned long long>(std::max<uint64_t>(o.roundtrips / 10, 100)), o.rounds);
    std::printf("| bytes | raw DMQ p50 | p99 | VIA PIO p50 | p99 | VIA DMA p50 | p99 | PIO / DMQ (rounds) | DMA / PIO |\n");
    std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (uint64_t s : kLatSizes) {
      auto d = half(find_series(r, "dmq", s)), p = half(find_series(r, "via_pio", s)),
           a = half(find_series(r, "via_dma", s));
      const auto rr = round_ratio_range(r, "via_pio", "dmq", s);
      std::printf("| %s | %s | %s | %s | %s | %s | %s | %s (%s-%s) | %s |\n", bench::size_label(s).c_str(),
                  bench::us(d.p50).c_str(), bench::us(d.p99).c_str(), bench::us(p.p50).c_str(),
                  bench::us(p.p99).c_str(), bench::us(a.p50).c_str(), bench::us(a.p99).c_str(),
                  d.p50 > 0 ? bench::ratio(p.p50 / d.p50).c_str() : "-", bench::ratio(rr.first).c_str(),
                  bench::ratio(rr.second).c_str(), p.p50 > 0 ? bench::ratio(a.p50 / p.p50).c_str() : "-");
    }
    std::printf("\nWaiting regime: futex sleeps per round trip (both processes; 0 = both spun, about 2 = both "
                "slept every exchange) and blocks in which A and B were seen on the same CPU, out of %d per "
                "series.\n\n| bytes | raw DMQ sleeps/rt | VIA PIO sleeps/rt | VIA DMA sleeps/rt | shared-CPU blocks "
                "DMQ, PIO, DMA |\n|---:|---:|---:|---:|---:|\n",
                o.rounds);
    for (uint64_t s : kLatSizes) {
      const LatSeries *d = find_series(r, "dmq", s), *p = find_series(r, "via_pio", s),
                      *a = find_series(r, "via_dma", s);
      if (!d || !p || !a) continue;
      std::printf("| %s | %.2f | %.2f | %.2f | %d, %d, %d |\n", bench::size_label(s).c_str(), d->sleeps_per_rt(),
                  p->sleeps_per_rt(), a->sleeps_per_rt(), d->shared_cpu_blocks, p->shared_cpu_blocks,
                  a->shared_cpu_blocks);
    }
  }

  if (o.bw) {
    std::printf("\n## Bandwidth (paper 001 Fig. 6): MB/s (10^6 B/s of payload)\n\n");
    std::printf("Median of %d repetitions (min-max), the five streams alternated within each. Per repetition "
                "%s or %.0f ms of sending, whichever is less (sized by a calibration run, which is also the "
                "warm-up), at least 32 messages. VIA: 4 receive buffers of 64 KiB posted, reliable delivery, the "
                "receiver reposts each buffer after checking it; credits = the reposted receive descriptors, the "
                "sender holds sends with DeferSends (up to %zu sends queued). auto = PIO up to 1024 B, DMA "
                "above. Raw DMQ: 256 KiB ring (= 4 x 64 KiB), PIO sends or async DMA with %zu source buffers. "
                "Data: the sender writes an 8-byte sequence number per message, the receiver checks length and "
                "sequence (payload not otherwise touched). Time: A's first send to B's last message consumed "
                "(one monotonic clock).\n\n",
                o.bw_reps, bench::size_label(o.bw_bytes).c_str(), o.bw_seconds * 1e3, kSendSlots, kSendSlots);
    std::printf("| size | VIA PIO | VIA DMA | VIA auto | DMQ PIO | DMQ DMA | VIA PIO / DMQ PIO | VIA DMA / DMQ DMA |\n");
    std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (uint64_t s : kBwSizes) {
      const double vp = bw_of(r, "via_pio", s), vd = bw_of(r, "via_dma", s), va = bw_of(r, "via_auto", s),
                   qp = bw_of(r, "dmq_pio", s), qd = bw_of(r, "dmq_dma", s);
      auto cell = [&](const char* n, double med) { return bench::fmt("%.0f", med) + range_of(bw_all(r, n, s), "%.0f"); };
      std::printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", bench::size_label(s).c_str(),
                  cell("via_pio", vp).c_str(), cell("via_dma", vd).c_str(), cell("via_auto", va).c_str(),
                  cell("dmq_pio", qp).c_str(), cell("dmq_dma", qd).c_str(),
                  bench::fmt("%.0f %%", qp > 0 ? 100 * vp / qp : 0).c_str(),
                  bench::fmt("%.0f %%", qd > 0 ? 100 * vd / qd : 0).c_str());
    }
    // Small messages: at most kRecvBuffers messages per credit round trip.
    const double rt0 = 2 * half(find_series(r, "via_pio", 0)).p50;
    if (rt0 > 0) {
      const double bound = kRecvBuffers * 16 / (rt0 * 1e-9) / 1e6;
      std::printf("\nSmall VIA messages are bounded by the credit loop, not by copying: at most %zu messages "
                  "(the posted receive buffers) per VIA round trip, since a buffer's descriptor must come back "
                  "through the cookie queue before it takes another message. With this run's VIA PIO 0-byte "
                  "round trip (%s us) that is %.0f MB/s at 16 B; measured %.0f MB/s. The raw DMQ has no such "
                  "loop (its 256 KiB ring holds thousands of small messages).\n",
                  kRecvBuffers, bench::us(rt0).c_str(), bound, bw_of(r, "via_pio", 16));
    }
  }

  if (o.cq) {
    std::printf("\n## Completion queues (paper 001 Fig. 7): messages/s through one CQ\n\n");
    std::printf("Server (peer process): one receive CQ over %zu connected VIs (on a NIC of their own; the "
                "latency/bandwidth VI is on another); VipCQWait, VipRecvDone, echo (VipPostSend), repost. Client "
                "(this process): one outstanding %u-byte request on each of the first N connections, echoes taken "
                "from its own CQ and re-sent on the same connection. %.2f s per point after a warm-up; idle "
                "connections stay connected. Median of %d repetitions (min-max). Paper: no degradation with "
                "load.\n\n",
                kCqMax, kCqMessage, o.cq_seconds, o.cq_reps);
    std::printf("| connections | PIO msg/s | DMA msg/s |\n|---:|---:|---:|\n");
    for (int n : o.cq_conns) {
      std::printf("| %d | %s%s | %s%s |\n", n, bench::fmt("%.0f", cq_of(r, "pio", n)).c_str(),
                  range_of(cq_all(r, "pio", n), "%.0f").c_str(), bench::fmt("%.0f", cq_of(r, "dma", n)).c_str(),
                  range_of(cq_all(r, "dma", n), "%.0f").c_str());
    }
  }

  const Targets t = targets(r);
  const auto rr0 = round_ratio_range(r, "via_pio", "dmq", 0);
  std::printf("\n## Targets\n\n| figure | measured | target | status |\n|---|---|---|---|\n");
  if (o.lat) {
    std::printf("| VIA PIO 0-byte round trip p50 / raw DMQ 0-byte round trip p50 | %s (%s vs %s us; rounds %s-%s) | "
                "<= %.0fx | %s |\n",
                bench::ratio(t.pio_over_dmq).c_str(), bench::us(2 * half(find_series(r, "via_pio", 0)).p50).c_str(),
                bench::us(2 * half(find_series(r, "dmq", 0)).p50).c_str(), bench::ratio(rr0.first).c_str(),
                bench::ratio(rr0.second).c_str(), kTargetPioOverDmq, bench::met(t.pio_over_dmq <= kTargetPioOverDmq));
    std::printf("| PIO beats DMA up to at least 128 bytes (latency, DMA p50 / PIO p50) | %s | > 1x at 0, 4, 40, 128 B | "
                "%s |\n",
                t.pio_dma_detail.c_str(), bench::met(t.pio_beats_dma));
  }
  if (o.bw) {
    std::printf("| DMA wins at 64 KiB: VIA DMA / VIA PIO bandwidth | %s (%.0f vs %.0f MB/s; raw DMQ DMA / PIO %s) | "
                "> 1x | %s |\n",
                bench::ratio(t.dma_over_pio_64k_bw).c_str(), bw_of(r, "via_dma", 65536), bw_of(r, "via_pio", 65536),
                bench::ratio(bw_of(r, "dmq_pio", 65536) > 0 ? bw_of(r, "dmq_dma", 65536) / bw_of(r, "dmq_pio", 65536) : 0)
                    .c_str(),
                bench::met(t.dma_over_pio_64k_bw > 1.0));
    std::printf("| VIA bandwidth at 64 KiB / raw DMQ's (best mode each) | %.0f %% (PIO/PIO %.0f %%, DMA/DMA %.0f %%) | "
                ">= %.0f %% | %s |\n",
                100 * t.bw_share, 100 * t.bw_share_pio, 100 * t.bw_share_dma, 100 * kTargetBwShare,
                bench::met(t.bw_share >= kTargetBwShare));
  }
  const bool has_cq = cq_of(r, "pio", 8) > 0 && cq_of(r, "pio", static_cast<int>(kCqMax)) > 0;
  if (has_cq) {
    for (const char* mode : {"PIO", "DMA"}) {
      const bool pio = mode[0] == 'P';
      const double keep = pio ? t.cq_keep_pio : t.cq_keep_dma;
      const char* n = pio ? "pio" : "dma";
      std::printf("| CQ throughput does not fall from 8 to %zu connections, %s: rate at %zu / at 8 | %.0f %% (%.0f vs "
                  "%.0f msg/s) | >= %.0f %% | %s |\n",
                  kCqMax, mode, kCqMax, 100 * keep, cq_of(r, n, static_cast<int>(kCqMax)), cq_of(r, n, 8),
                  100 * kTargetCqKeep, bench::met(keep >= kTargetCqKeep));
    }
  }
  std::fflush(stdout);
}

bool write_outputs(const Options& o, const Results& r) {
  if (mkdir(o.out.c_str(), 0755) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "bench_via: cannot create %s: %s\n", o.out.c_str(), std::strerror(errno));
    return false;
  }
  {
    std::ofstream f(o.out + "/via.csv");
    f << "table,series,rep,size_bytes,connections,samples,half_rt_p50_ns,half_rt_p90_ns,half_rt_p99_ns,"
         "half_rt_mean_ns,half_rt_max_ns,mb_per_s,messages_per_s,seconds,sleeps_per_exchange\n";
    for (const auto& s : r.lat) {
      const auto h = half(&s);
      f << "latency," << s.name << ",," << s.size << ",1," << h.count << ',' << bench::fmt("%.0f", h.p50) << ','
        << bench::fmt("%.0f", h.p90) << ',' << bench::fmt("%.0f", h.p99) << ',' << bench::fmt("%.0f", h.mean) << ','
        << bench::fmt("%.0f", h.max) << ",,,," << bench::fmt("%.3f", s.sleeps_per_rt()) << "\n";
    }
    for (const auto& p : r.bw) {
      f << "bandwidth," << p.name << ',' << p.rep << ',' << p.size << ",1," << p.messages << ",,,,,,"
        << bench::fmt("%.1f", p.mbs()) << ",," << bench::fmt("%.6f", p.seconds) << ','
        << bench::fmt("%.3f", p.act.sleeps_per_exchange()) << '\n';
    }
    for (const auto& p : r.cq) {
      f << "cq," << p.name << ',' << p.rep << ',' << kCqMessage << ',' << p.conns << ',' << p.messages << ",,,,,,,"
        << bench::fmt("%.0f", p.rate()) << ',' << bench::fmt("%.6f", p.seconds) << ",\n";
    }
    if (!f) return false;
  }
  {
    std::ofstream f(o.out + "/via.json");
    f << "{\n  \"benchmark\": \"via\",\n  \"machine\": " << bench::json_machine(r.machine) << ",\n";
    f << "  \"config\": {\"pinned\": " << (r.pinned ? "true" : "false") << ", \"spin_budget_ns\": " << r.spin_ns
      << ", \"clock_overhead_ns\": " << bench::json_num(r.clock_ns) << ", \"round_trips\": " << o.roundtrips
      << ", \"rounds\": " << o.rounds << ", \"bw_bytes\": " << o.bw_bytes
      << ", \"bw_seconds\": " << bench::json_num(o.bw_seconds) << ", \"bw_reps\": " << o.bw_reps
      << ", \"cq_reps\": " << o.cq_reps
      << ", \"recv_buffers\": " << kRecvBuffers << ", \"flow_control\": \"DeferSends (reposted receive descriptors "
      << "are the credits)\", \"latency_wait\": \"VipRecvWait\", \"reliability\": \"reliable_delivery\""
      << ", \"cq_seconds\": " << bench::json_num(o.cq_seconds) << ", \"quick\": " << (o.quick ? "true" : "false")
      << "},\n";
    f << "  \"latency_half_round_trip\": [\n";
    for (size_t i = 0; i < r.lat.size(); ++i) {
      const auto& s = r.lat[i];
      f << "    {\"series\": " << bench::json_str(s.name) << ", \"size\": " << s.size
        << ", \"half_round_trip\": " << bench::json_summary(half(&s))
        << ", \"sleeps_per_round_trip\": " << bench::json_num(s.sleeps_per_rt())
        << ", \"shared_cpu_blocks\": " << s.shared_cpu_blocks << ", \"round_p50_ns\": [";
      for (size_t k = 0; k < s.round_p50.size(); ++k) f << (k ? ", " : "") << bench::json_num(s.round_p50[k] / 2);
      f << "]}" << (i + 1 < r.lat.size() ? ",\n" : "\n");
    }
    f << "  ],\n  \"bandwidth\": [\n";
    for (size_t i = 0; i < r.bw.size(); ++i) {
      const auto& p = r.bw[i];
      f << "    {\"series\": " << bench::json_str(p.name) << ", \"rep\": " << p.rep << ", \"size\": " << p.size
        << ", \"messages\": " << p.messages << ", \"seconds\": " << bench::json_num(p.seconds)
        << ", \"mb_per_s\": " << bench::json_num(p.mbs())
        << ", \"sleeps_per_message\": " << bench::json_num(p.act.sleeps_per_exchange()) << "}"
        << (i + 1 < r.bw.size() ? ",\n" : "\n");
    }
    f << "  ],\n  \"cq\": [\n";
    for (size_t i = 0; i < r.cq.size(); ++i) {
      const auto& p = r.cq[i];
      f << "    {\"series\": " << bench::json_str(p.name) << ", \"rep\": " << p.rep << ", \"connections\": " << p.conns
        << ", \"messages\": " << p.messages << ", \"seconds\": " << bench::json_num(p.seconds)
        << ", \"messages_per_s\": " << bench::json_num(p.rate()) << ", \"server_echoes\": " << p.server_echoes << "}"
        << (i + 1 < r.cq.size() ? ",\n" : "\n");
    }
    const Targets t = targets(r);
    f << "  ],\n  \"targets\": [\n";
    using bench::json_num;
    using bench::json_target;
    f << "    " << json_target("via_pio_0b_rt_over_dmq_0b_rt", json_num(t.pio_over_dmq), "<= 2",
                             t.pio_over_dmq <= kTargetPioOverDmq) << ",\n";
    f << "    " << json_target("pio_beats_dma_up_to_128b", bench::json_str(t.pio_dma_detail),
                             "DMA p50 > PIO p50 at 0, 4, 40, 128 B", t.pio_beats_dma) << ",\n";
    f << "    " << json_target("via_dma_over_pio_bw_64k", json_num(t.dma_over_pio_64k_bw), "> 1",
                             t.dma_over_pio_64k_bw > 1) << ",\n";
    f << "    " << json_target("via_bw_64k_over_dmq_best", json_num(t.bw_share), ">= 0.5",
                             t.bw_share >= kTargetBwShare) << ",\n";
    f << "    " << json_target("cq_pio_64_over_8", json_num(t.cq_keep_pio), ">= 0.9",
                             t.cq_keep_pio >= kTargetCqKeep) << ",\n";
    f << "    " << json_target("cq_dma_64_over_8", json_num(t.cq_keep_dma), ">= 0.9",
                             t.cq_keep_dma >= kTargetCqKeep) << "\n";
    f << "  ]\n}\n";
    if (!f) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  signal(SIGPIPE, SIG_IGN);
  g_pin = o.pin;
  // One spin budget for every NIC of both processes (VIPL and raw DMQ alike).
  if (o.spin_ns >= 0) setenv("CLAN_SPIN_NS", std::to_string(o.spin_ns).c_str(), 1);

  // A private OOB runtime directory (the VIPL name service), inherited by the peer.
  char tmpl[] = "/tmp/bench-via-XXXXXX";
  if (!mkdtemp(tmpl)) {
    std::fprintf(stderr, "bench_via: mkdtemp failed\n");
    return 1;
  }
  g_runtime_dir = tmpl;
  setenv("CLAN_RUNTIME_DIR", tmpl, 1);
  g_node_a = "vbench-a-" + std::to_string(getpid());
  g_node_b = "vbench-b-" + std::to_string(getpid());

  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) die("mmap of the shared page failed");
  g_go = new (page) std::atomic<uint64_t>(0);
  bench::Channel ctl_a, ctl_b;
  if (!bench::Channel::make_pair(ctl_a, ctl_b)) die("control socketpair failed");
  Results res;
  res.machine = bench::machine_info();
  std::fflush(nullptr);
  bench::arm_watchdog(120);
  const pid_t peer = bench::spawn_peer([&] {
    ctl_a.reset();
    return run_peer(std::move(ctl_b));
  });
  if (peer < 0) die("fork failed");
  g_peer = peer;
  ctl_b.reset();

  Driver drv(o, std::move(ctl_a));
  std::fprintf(stderr, "[setup] opening NICs, connecting %zu VIs\n", kCqMax + 1);
  drv.setup();
  res.spin_ns = drv.spin_ns();
  res.pinned = drv.pinned();
  res.connect_ms = drv.connect_ms();
  res.clock_ns = bench::clock_overhead_ns();
  const auto t_start = Clock::now();

  // 1. Latency, alternating DMQ, VIA PIO, VIA DMA.
  for (int round = 0; o.lat && round < o.rounds; ++round) {
    for (uint64_t size : kLatSizes) {
      bench::arm_watchdog(120);
      const uint64_t total = size >= 65536 ? std::max<uint64_t>(o.roundtrips / 10, 100) : o.roundtrips;
      const uint64_t block = std::max<uint64_t>(1, total / static_cast<uint64_t>(o.rounds));
      const uint64_t warm = std::max<uint64_t>(50, block / 10);
      std::string line;
      for (const char* name : {"dmq", "via_pio", "via_dma"}) {
        std::vector<uint64_t> v;
        v.reserve(block);
        const std::string n = name;
        const BlockActivity act =
            n == "dmq" ? drv.dmq_lat(size, warm, block, v)
                       : drv.via_lat(n == "via_pio" ? VIP_CLAN_TRANSFER_PIO : VIP_CLAN_TRANSFER_DMA, size, warm, block, v);
        const auto sm = bench::summarize(v);
        LatSeries& s = series(res, n, size);
        s.rt.insert(s.rt.end(), v.begin(), v.end());
        s.round_p50.push_back(sm.p50);
        s.sleeps += act.a.sleeps + act.b.sleeps;
        s.exchanges += act.exchanges;
        s.shared_cpu_blocks += act.shared_cpu() ? 1 : 0;
        line += "  " + n + " " + bench::us(sm.p50 / 2) + bench::fmt(" (%.2f sleeps/rt)", act.sleeps_per_exchange());
      }
      std::fprintf(stderr, "[latency] round %d/%d %6s half-RT p50 us:%s\n", round + 1, o.rounds,
                   bench::size_label(size).c_str(), line.c_str());
    }
  }

  // 2. Bandwidth: per size, a calibration run of each stream (also its
  // warm-up) sizes the measured runs: at least the paper's 10 MB, unless that
  // takes longer than bw_seconds. Then bw_reps repetitions, the five streams
  // alternated within each.
  const std::pair<const char*, int> streams[] = {
      {"via_pio", 0}, {"via_dma", 1}, {"via_auto", 2}, {"dmq_pio", 3}, {"dmq_dma", 4}};
  for (uint64_t size : o.bw ? kBwSizes : std::vector<uint64_t>{}) {
    bench::arm_watchdog(120);
    auto run = [&](int k, uint64_t n) {
      switch (k) {
        case 0: return drv.via_bw(VIP_CLAN_TRANSFER_PIO, size, n);
        case 1: return drv.via_bw(VIP_CLAN_TRANSFER_DMA, size, n);
        case 2: return drv.via_bw(VIP_CLAN_TRANSFER_AUTO, size, n);
        case 3: return drv.dmq_bw(false, size, n);
        default: return drv.dmq_bw(true, size, n);
      }
    };
    uint64_t counts[5];
    for (const auto& [name, k] : streams) {
      const uint64_t pilot = std::clamp<uint64_t>(o.bw_bytes / size / 20, 16, 2000);
      const BwPoint p = run(k, pilot);
      const double rate = p.seconds > 0 ? static_cast<double>(pilot) / p.seconds : 1e6;
      const uint64_t by_time = static_cast<uint64_t>(rate * o.bw_seconds);
      counts[k] = std::max<uint64_t>(std::min<uint64_t>(std::max<uint64_t>(o.bw_bytes / size, 1), by_time), 32);
    }
    std::string line;
    for (int rep = 0; rep < o.bw_reps; ++rep) {
      for (const auto& [name, k] : streams) {
        BwPoint p = run(k, counts[k]);
        p.name = name;
        p.rep = rep;
        res.bw.push_back(p);
      }
    }
    for (const auto& [name, k] : streams) {
      line += std::string("  ") + name + " " + bench::mbs(bw_of(res, name, size) * 1e6) +
              bench::fmt(" (%.2f sleeps/msg)", bw_sleeps(res, name, size));
    }
    std::fprintf(stderr, "[bandwidth] %6s median MB/s:%s\n", bench::size_label(size).c_str(), line.c_str());
  }

  // 3. Completion queues: cq_reps repetitions over the connection counts,
  // PIO and DMA alternated per point.
  for (int rep = 0; o.cq && rep < o.cq_reps; ++rep) {
    for (int n : o.cq_conns) {
      bench::arm_watchdog(120);
      std::string line;
      for (const char* name : {"pio", "dma"}) {
        CqPoint p =
            drv.cq(std::string(name) == "pio" ? VIP_CLAN_TRANSFER_PIO : VIP_CLAN_TRANSFER_DMA, n, o.cq_seconds);
        p.name = name;
        p.rep = rep;
        res.cq.push_back(p);
        line += std::string("  ") + name + " " + bench::fmt("%.0f", p.rate());
      }
      std::fprintf(stderr, "[cq] %d/%d %2d connections msg/s:%s\n", rep + 1, o.cq_reps, n, line.c_str());
    }
  }

  bench::arm_watchdog(30);
  drv.quit();
  const int code = bench::reap_peer(peer, milliseconds(10000));
  g_peer = -1;
  bench::disarm_watchdog();
  cleanup_runtime();
  if (code != 0) std::fprintf(stderr, "bench_via: peer exited with status %d\n", code);
  std::fprintf(stderr, "[done] measured in %.1f s\n",
               std::chrono::duration<double>(Clock::now() - t_start).count());

  print_tables(o, res);
  if (!o.out.empty()) {
    if (!write_outputs(o, res)) {
      std::fprintf(stderr, "bench_via: cannot write results to %s\n", o.out.c_str());
      return 1;
    }
    std::fprintf(stderr, "bench_via: results in %s/via.csv, via.json\n", o.out.c_str());
  }
  return code == 0 ? 0 : 1;
}
