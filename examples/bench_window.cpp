// bench_window: throughput of the DatagramLink (clan_emul/datagram_link.hpp)
// between two processes vs the credit window (paper 003 sect. 3, Figs. 2-3;
// the flow-control window table of examples/DESIGN.md): windows 1, 4, 8, 32 and unlimited
// (0, no flow control: only the DMQ ring limits what is in flight), datagram
// sizes 1 KiB and 8 KiB, loss 0 % (and 1 % in both directions, credit acks
// included, with --loss).
//
// One peer process (the receiver) accepts a fresh link per point; this
// process connects and sends as fast as the window allows for the point's
// duration, flushes, closes. The receiver copies every datagram out and
// times the first to the last; the throughput is what it received (goodput).
// Each point runs --reps times, the points of a repetition alternated, and
// the median is reported.
//
// Usage: bench_window [--quick] [--ms N] [--reps N] [--loss] [--out DIR]
// Tables go to stdout (Markdown), progress to stderr. The target is reported,
// never asserted: the exit status is non-zero only when something failed.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
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
#include "clan_emul/datagram_link.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/oob_listener.hpp"
#include "clan_emul/oob_manager.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using clan::Deadline;
using clan::Errc;
using std::chrono::milliseconds;
using std::chrono::seconds;

const std::vector<size_t> kWindows = {1, 4, 8, 32, 0};
const std::vector<size_t> kSizes = {1024, 8192};
constexpr double kTargetRatio = 0.90;  // within 10 % of unlimited from window 8 up
constexpr size_t kTargetFromWindow = 8;
constexpr uint16_t kPort = 9;

struct Options {
  bool quick = false;
  int point_ms = 1000;
  int reps = 3;
  bool loss = false;
  std::string out;
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--quick] [--ms N] [--reps N] [--loss] [--out DIR]\n", argv0);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  bool ms = false, reps = false;
  auto num = [&](int& i) -> long {
    if (i + 1 >= argc) usage(argv[0]);
    char* end = nullptr;
    long v = std::strtol(argv[++i], &end, 10);
    if (!end || *end || v < 1) usage(argv[0]);
    return v;
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick") o.quick = true;
    else if (a == "--ms") o.point_ms = static_cast<int>(num(i)), ms = true;
    else if (a == "--reps") o.reps = static_cast<int>(num(i)), reps = true;
    else if (a == "--loss") o.loss = true;
    else if (a == "--out") {
      if (i + 1 >= argc) usage(argv[0]);
      o.out = argv[++i];
    } else usage(argv[0]);
  }
  if (o.quick) {
    if (!ms) o.point_ms = 100;
    if (!reps) o.reps = 1;
  }
  return o;
}

// The link geometry of a point: the payload is exactly `size`; the ring is
// the same for every window of a size (the unlimited row gets that ring),
// large enough for window 32.
clan::DatagramLinkConfig point_config(size_t size, size_t window, double loss, uint64_t seed) {
  clan::DatagramLinkConfig c;
  c.mtu = size + clan::DatagramLink::kLinkHeader;
  c.window = 32;
  size_t ring = 256 * 1024;
  while (ring < clan::DatagramLink::ring_bytes_needed(c)) ring *= 2;
  c.ring_bytes = ring;
  c.window = window;
  c.faults.seed = seed;
  c.faults.drop_rate = loss;
  return c;
}

// Control messages.
struct Cmd {
  uint32_t quit;
  uint32_t size;
  uint32_t window;
  uint32_t loss_ppm;
};
struct Report {
  int32_t error;  // Errc of the receive loop that was not kClosed, else 0
  uint64_t datagrams;
  uint64_t bytes;
  uint64_t first_ns;
  uint64_t last_ns;
  uint64_t acks_sent;
  uint64_t lost;
};

std::string g_runtime_dir;

clan::OobConfig oob_config(const char* node) {
  clan::OobConfig c;
  c.node = node;
  c.runtime_dir = g_runtime_dir;
  return c;
}

// The receiver process.
int run_peer(bench::Channel ctl) {
  auto nic = clan::Nic::open({});
  auto mgr = clan::OobManager::start(oob_config("window-rx"));
  if (!nic || !mgr) return 10;
  auto listener = (*mgr)->listen(kPort);
  if (!listener) return 11;
  if (!ctl.put('r')) return 12;
  for (;;) {
    Cmd cmd{};
    if (!ctl.get(cmd, milliseconds(600000))) return 13;
    if (cmd.quit) return 0;
    auto req = (*listener)->next_request(Deadline::after(seconds(20)));
    if (!req) return 14;
    auto cfg = point_config(cmd.size, cmd.window, cmd.loss_ppm / 1e6, 0x5eed0002 + cmd.window);
    auto link = clan::DatagramLink::accept(**nic, *req, cfg);
    if (!link) return 15;
    std::vector<unsigned char> buf((*link)->mtu());
    Report r{};
    uint64_t sum = 0;
    for (;;) {
      auto got = (*link)->receive(buf.data(), buf.size(), Deadline::after(seconds(20)));
      if (!got) {
        if (got.error() != Errc::kClosed) r.error = static_cast<int32_t>(got.error());
        break;
      }
      const uint64_t now = clan::now_ns();
      if (r.datagrams == 0) r.first_ns = now;
      r.last_ns = now;
      ++r.datagrams;
      r.bytes += got.value();
      sum += buf[0];  // the data is read, not only copied
    }
    (void)sum;
    const auto st = (*link)->stats();
    r.acks_sent = st.credit_acks_sent;
    r.lost = st.data_lost;
    link.value().reset();
    if (!ctl.put(r)) return 16;
  }
}

struct Point {
  size_t size = 0, window = 0;
  double loss = 0;
  std::vector<double> bps, dps;  // per repetition
  uint64_t datagrams = 0, stalls = 0, acks = 0, probes = 0, lost = 0, ring_stalls = 0;
  double ratio = 0;  // median MB/s over the unlimited row's
  double mb_s() const { return bench::median(bps) / 1e6; }
  double d_s() const { return bench::median(dps); }
};

bool run_point(bench::Channel& ctl, clan::Nic& nic, clan::OobManager& mgr, const Options& o,
               Point& p) {
  Cmd cmd{0, static_cast<uint32_t>(p.size), static_cast<uint32_t>(p.window),
          static_cast<uint32_t>(p.loss * 1e6 + 0.5)};
  if (!ctl.put(cmd)) return false;
  auto cfg = point_config(p.size, p.window, p.loss, 0x5eed0001 + p.window);
  auto link = clan::DatagramLink::connect(nic, mgr, "window-rx", kPort, cfg,
                                          Deadline::after(seconds(20)));
  if (!link) {
    std::fprintf(stderr, "bench_window: connect: %s\n", clan::to_string(link.error()));
    return false;
  }
  std::vector<unsigned char> payload(p.size, 0xa5);
  const auto end = Clock::now() + milliseconds(o.point_ms);
  Errc e = Errc::kOk;
  uint64_t n = 0;
  while (e == Errc::kOk) {
    payload[0] = static_cast<unsigned char>(n);
    e = (*link)->send(payload.data(), payload.size(), Deadline::after(seconds(10)));
    if ((++n & 63) == 0 && Clock::now() >= end) break;
  }
  if (e == Errc::kOk) e = (*link)->flush(Deadline::after(seconds(10)));
  const auto st = (*link)->stats();
  (*link)->close();
  link.value().reset();
  Report r{};
  if (!ctl.get(r, milliseconds(30000))) {
    std::fprintf(stderr, "bench_window: no report from the receiver\n");
    return false;
  }
  if (e != Errc::kOk || r.error != 0 || r.datagrams < 2 || r.last_ns <= r.first_ns) {
    std::fprintf(stderr, "bench_window: point size %zu window %zu failed: send %s, receive %s\n",
                 p.size, p.window, clan::to_string(e), clan::to_string(static_cast<Errc>(r.error)));
    return false;
  }
  const double secs = static_cast<double>(r.last_ns - r.first_ns) / 1e9;
  // First to last datagram: n - 1 intervals.
  p.dps.push_back(static_cast<double>(r.datagrams - 1) / secs);
  p.bps.push_back(static_cast<double>(r.bytes) * static_cast<double>(r.datagrams - 1) /
                  static_cast<double>(r.datagrams) / secs);
  p.datagrams += r.datagrams;
  p.stalls += st.credit_stalls;
  p.probes += st.probes_sent;
  p.ring_stalls += st.ring_full_stalls;
  p.acks += r.acks_sent;
  p.lost += r.lost;
  return true;
}

std::string window_label(size_t w) { return w == 0 ? "unlimited" : std::to_string(w); }

// Per size and loss: the worst ratio from window 8 up.
struct Target {
  size_t size;
  double loss;
  double worst = 1e9;
  size_t worst_window = 0;
  bool met() const { return worst >= kTargetRatio; }
};

std::vector<Target> targets(const std::vector<Point>& pts) {
  std::vector<Target> t;
  for (const Point& p : pts) {
    if (p.window == 0 || p.window < kTargetFromWindow) continue;
    auto it = std::find_if(t.begin(), t.end(),
                           [&](const Target& x) { return x.size == p.size && x.loss == p.loss; });
    if (it == t.end()) it = t.insert(t.end(), Target{p.size, p.loss});
    if (p.ratio < it->worst) it->worst = p.ratio, it->worst_window = p.window;
  }
  return t;
}

void print_tables(const Options& o, const bench::MachineInfo& m, const std::vector<Point>& pts) {
  std::printf("# clanorb flow-control window benchmark (paper 003 sect. 3)\n\n");
  std::printf("| | |\n|---|---|\n");
  std::printf("| date | %s |\n", m.date_utc.c_str());
  std::printf("| CPU | %s |\n", m.cpu_model.c_str());
  std::printf("| cores | %ld online, %d allowed |\n", m.cores_online, m.cores_allowed);
  std::printf("| kernel | %s |\n", m.kernel.c_str());
  std::printf("| link | DatagramLink between two processes, one cumulative credit ack per half window consumed, "
              "probe after %lld us (then backing off); ring 256 KiB (1 KiB) / 512 KiB (8 KiB) for every "
              "window |\n",
              static_cast<long long>(clan::DatagramLinkConfig{}.probe_after.count()));
  std::printf("| points | %d ms each, %d repetition(s) alternated, median; goodput at the receiver "
              "(first to last datagram, every datagram copied out) |\n",
              o.point_ms, o.reps);
  std::printf("| compiler | %s |\n\n", m.compiler.c_str());

  std::printf("| size | loss | window | MB/s | datagrams/s | vs unlimited | credit stalls | "
              "acks | probes | lost |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Point& p : pts) {
    std::printf("| %s | %s | %s | %.0f | %.0f | %.2f | %" PRIu64 " | %" PRIu64 " | %" PRIu64
                " | %" PRIu64 " |\n",
                bench::size_label(p.size).c_str(), bench::fmt("%.0f %%", p.loss * 100).c_str(),
                window_label(p.window).c_str(), p.mb_s(), p.d_s(), p.ratio, p.stalls, p.acks,
                p.probes, p.lost);
  }
  std::printf("\n| target | measured | |\n|---|---|---|\n");
  for (const Target& t : targets(pts)) {
    std::printf("| throughput within 10 %% of unlimited from window 8 up (%s, loss %.0f %%) | "
                "worst %.2f of unlimited (window %zu) | %s |\n",
                bench::size_label(t.size).c_str(), t.loss * 100, t.worst, t.worst_window,
                bench::met(t.met()));
  }
  std::fflush(stdout);
}

bool write_outputs(const Options& o, const bench::MachineInfo& m, const std::vector<Point>& pts) {
  if (mkdir(o.out.c_str(), 0755) != 0 && errno != EEXIST) return false;
  std::ofstream csv(o.out + "/window.csv");
  csv << "size,loss,window,mb_s,datagrams_s,ratio_to_unlimited,credit_stalls,acks,probes,lost,"
         "ring_full_stalls,datagrams,reps\n";
  for (const Point& p : pts) {
    csv << p.size << ',' << p.loss << ',' << p.window << ',' << bench::fmt("%.3f", p.mb_s()) << ','
        << bench::fmt("%.1f", p.d_s()) << ',' << bench::fmt("%.4f", p.ratio) << ',' << p.stalls
        << ',' << p.acks << ',' << p.probes << ',' << p.lost << ',' << p.ring_stalls << ','
        << p.datagrams << ',' << p.bps.size() << '\n';
  }
  std::ofstream js(o.out + "/window.json");
  js << "{\n  \"benchmark\": \"window\",\n  \"machine\": " << bench::json_machine(m)
     << ",\n  \"point_ms\": " << o.point_ms << ",\n  \"reps\": " << o.reps << ",\n  \"points\": [\n";
  for (size_t i = 0; i < pts.size(); ++i) {
    const Point& p = pts[i];
    js << "    {\"size\": " << p.size << ", \"loss\": " << bench::json_num(p.loss)
       << ", \"window\": " << p.window << ", \"mb_s\": " << bench::json_num(p.mb_s())
       << ", \"datagrams_s\": " << bench::json_num(p.d_s())
       << ", \"ratio_to_unlimited\": " << bench::json_num(p.ratio)
       << ", \"credit_stalls\": " << p.stalls << ", \"acks\": " << p.acks
       << ", \"probes\": " << p.probes << ", \"lost\": " << p.lost
       << ", \"ring_full_stalls\": " << p.ring_stalls << "}" << (i + 1 < pts.size() ? "," : "")
       << "\n";
  }
  js << "  ],\n  \"targets\": [\n";
  const auto ts = targets(pts);
  for (size_t i = 0; i < ts.size(); ++i) {
    js << "    {\"name\": \"throughput within 10 % of unlimited from window 8 up\", \"size\": "
       << ts[i].size << ", \"loss\": " << bench::json_num(ts[i].loss)
       << ", \"worst_ratio\": " << bench::json_num(ts[i].worst)
       << ", \"worst_window\": " << ts[i].worst_window << ", \"target_ratio\": " << kTargetRatio
       << ", \"met\": " << (ts[i].met() ? "true" : "false") << "}"
       << (i + 1 < ts.size() ? "," : "") << "\n";
  }
  js << "  ]\n}\n";
  return csv.good() && js.good();
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  signal(SIGPIPE, SIG_IGN);
  char tmpl[] = "/tmp/clan-window-XXXXXX";
  if (!mkdtemp(tmpl)) {
    std::perror("bench_window: mkdtemp");
    return 1;
  }
  g_runtime_dir = tmpl;
  struct Cleanup {
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(g_runtime_dir, ec);
    }
  } cleanup;

  bench::Channel ctl_a, ctl_b;
  if (!bench::Channel::make_pair(ctl_a, ctl_b)) {
    std::fprintf(stderr, "bench_window: socketpair failed\n");
    return 1;
  }
  const bench::MachineInfo machine = bench::machine_info();
  std::fflush(nullptr);
  bench::arm_watchdog(60);
  // NICs and OOB managers only after the fork.
  const pid_t peer = bench::spawn_peer([&] {
    ctl_a.reset();
    return run_peer(std::move(ctl_b));
  });
  if (peer < 0) {
    std::fprintf(stderr, "bench_window: fork failed\n");
    return 1;
  }
  ctl_b.reset();
  int failed = 0;
  std::vector<Point> pts;
  for (double loss : o.loss ? std::vector<double>{0.0, 0.01} : std::vector<double>{0.0}) {
    for (size_t size : kSizes) {
      for (size_t w : kWindows) {
        Point p;
        p.size = size;
        p.window = w;
        p.loss = loss;
        pts.push_back(p);
      }
    }
  }
  {
    char token = 0;
    auto nic = clan::Nic::open({});
    auto mgr = clan::OobManager::start(oob_config("window-tx"));
    if (!nic || !mgr || !ctl_a.get(token, milliseconds(20000))) {
      std::fprintf(stderr, "bench_window: set-up failed\n");
      failed = 1;
    }
    for (int rep = 0; rep < o.reps && !failed; ++rep) {
      for (Point& p : pts) {
        bench::arm_watchdog(static_cast<unsigned>(o.point_ms / 1000 + 60));
        if (!run_point(ctl_a, **nic, **mgr, o, p)) {
          failed = 1;
          break;
        }
        std::fprintf(stderr, "[window] rep %d/%d %s loss %.0f%% window %-9s %8.0f MB/s %10.0f dgram/s\n",
                     rep + 1, o.reps, bench::size_label(p.size).c_str(), p.loss * 100,
                     window_label(p.window).c_str(), p.bps.back() / 1e6, p.dps.back());
      }
    }
    bench::arm_watchdog(30);
    Cmd quit{1, 0, 0, 0};
    ctl_a.put(quit);
  }
  const int code = bench::reap_peer(peer, milliseconds(10000));
  bench::disarm_watchdog();
  if (code != 0) std::fprintf(stderr, "bench_window: peer exited with status %d\n", code);
  if (failed) return 1;

  for (Point& p : pts) {
    auto un = std::find_if(pts.begin(), pts.end(), [&](const Point& x) {
      return x.size == p.size && x.loss == p.loss && x.window == 0;
    });
    p.ratio = un != pts.end() && un->mb_s() > 0 ? p.mb_s() / un->mb_s() : 0;
  }
  print_tables(o, machine, pts);
  if (!o.out.empty()) {
    if (!write_outputs(o, machine, pts)) {
      std::fprintf(stderr, "bench_window: cannot write results to %s\n", o.out.c_str());
      return 1;
    }
    std::fprintf(stderr, "bench_window: results in %s/window.csv, window.json\n", o.out.c_str());
  }
  return code == 0 ? 0 : 1;
}
