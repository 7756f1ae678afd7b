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
// Usage: bench_window [--quick] [--ms N] [--reps N] [--loss] [--spin-ns N] [--out DIR]
// Tables go to stdout (Markdown), progress to stderr; --out DIR gets
// window.csv and window.json. The target (examples/targets.tsv) is reported,
// never asserted: the exit status is non-zero only when something failed.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/channel.hpp"
#include "bench/format.hpp"
#include "bench/json.hpp"
#include "bench/machine.hpp"
#include "bench/options.hpp"
#include "bench/output.hpp"
#include "bench/peer.hpp"
#include "bench/process_pair.hpp"
#include "bench/session.hpp"
#include "bench/stats.hpp"
#include "bench/table.hpp"
#include "bench/targets.hpp"
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
// The target's id in targets.tsv: the worst ratio to unlimited from this
// window up.
const char* const kTarget = "window8_over_unlimited";
constexpr size_t kTargetFromWindow = 8;
constexpr uint16_t kPort = 9;

struct Options {
  bench::CommonOptions common;
  int point_ms = 1000;
  int reps = 3;
  bool loss = false;
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--quick] [--ms N] [--reps N] [--loss] [--spin-ns N] [--out DIR]\n", argv0);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  bool ms = false, reps = false;
  auto num = [&](int& i) -> int {
    if (i + 1 >= argc) usage(argv[0]);
    char* end = nullptr;
    long v = std::strtol(argv[++i], &end, 10);
    if (!end || *end || v < 1) usage(argv[0]);
    return static_cast<int>(v);
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (bench::take_common_option(argc, argv, i, o.common, usage)) continue;
    if (a == "--ms") o.point_ms = num(i), ms = true;
    else if (a == "--reps") o.reps = num(i), reps = true;
    else if (a == "--loss") o.loss = true;
    else usage(argv[0]);
  }
  if (o.common.quick) {
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

// The receiver's side of one point: every datagram copied out and read,
// timed from the first to the last.
Report receive_point(clan::DatagramLink& link) {
  std::vector<unsigned char> buf(link.mtu());
  Report r{};
  uint64_t sum = 0;
  for (;;) {
    auto got = link.receive(buf.data(), buf.size(), Deadline::after(seconds(20)));
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
  const auto st = link.stats();
  r.acks_sent = st.credit_acks_sent;
  r.lost = st.data_lost;
  return r;
}

// The receiver process: accepts a fresh link per point.
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
    const Report r = receive_point(**link);
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

// Sends as fast as the window allows for the point's duration, then
// flushes; the link's statistics, the error that ended the sending.
Errc send_point(clan::DatagramLink& link, const Point& p, int point_ms, clan::DatagramLink::Stats& st) {
  std::vector<unsigned char> payload(p.size, 0xa5);
  const auto end = Clock::now() + milliseconds(point_ms);
  Errc e = Errc::kOk;
  uint64_t n = 0;
  while (e == Errc::kOk) {
    payload[0] = static_cast<unsigned char>(n);
    e = link.send(payload.data(), payload.size(), Deadline::after(seconds(10)));
    if ((++n & 63) == 0 && Clock::now() >= end) break;
  }
  if (e == Errc::kOk) e = link.flush(Deadline::after(seconds(10)));
  st = link.stats();
  link.close();
  return e;
}

// One repetition's figures: goodput over first to last datagram (n - 1
// intervals), and both sides' counters.
void record(Point& p, const Report& r, const clan::DatagramLink::Stats& st) {
  const double secs = static_cast<double>(r.last_ns - r.first_ns) / 1e9;
  p.dps.push_back(static_cast<double>(r.datagrams - 1) / secs);
  p.bps.push_back(static_cast<double>(r.bytes) * static_cast<double>(r.datagrams - 1) /
                  static_cast<double>(r.datagrams) / secs);
  p.datagrams += r.datagrams;
  p.stalls += st.credit_stalls;
  p.probes += st.probes_sent;
  p.ring_stalls += st.ring_full_stalls;
  p.acks += r.acks_sent;
  p.lost += r.lost;
}

bool run_point(bench::Channel& ctl, clan::Nic& nic, clan::OobManager& mgr, const Options& o, Point& p) {
  Cmd cmd{0, static_cast<uint32_t>(p.size), static_cast<uint32_t>(p.window),
          static_cast<uint32_t>(p.loss * 1e6 + 0.5)};
  if (!ctl.put(cmd)) return false;
  auto cfg = point_config(p.size, p.window, p.loss, 0x5eed0001 + p.window);
  auto link = clan::DatagramLink::connect(nic, mgr, "window-rx", kPort, cfg, Deadline::after(seconds(20)));
  if (!link) {
    std::fprintf(stderr, "bench_window: connect: %s\n", clan::to_string(link.error()));
    return false;
  }
  clan::DatagramLink::Stats st{};
  const Errc e = send_point(**link, p, o.point_ms, st);
  link.value().reset();
  Report r{};
  if (!ctl.get(r, milliseconds(30000))) {
    std::fprintf(stderr, "bench_window: no report from the receiver\n");
    return false;
  }
  if (e != Errc::kOk || r.error != 0 || r.datagrams < 2 || r.last_ns <= r.first_ns) {
    std::fprintf(stderr, "bench_window: point size %zu window %zu failed: send %s, receive %s\n", p.size, p.window,
                 clan::to_string(e), clan::to_string(static_cast<Errc>(r.error)));
    return false;
  }
  record(p, r, st);
  return true;
}

std::string window_label(size_t w) { return w == 0 ? "unlimited" : std::to_string(w); }

// Per size and loss: the worst ratio from window kTargetFromWindow up.
struct Verdict {
  size_t size;
  double loss;
  double worst = 1e9;
  size_t worst_window = 0;
  bool met() const { return bench::targets().met(kTarget, worst); }
};

std::vector<Verdict> verdicts(const std::vector<Point>& pts) {
  std::vector<Verdict> t;
  for (const Point& p : pts) {
    if (p.window == 0 || p.window < kTargetFromWindow) continue;
    auto it = std::find_if(t.begin(), t.end(), [&](const Verdict& x) { return x.size == p.size && x.loss == p.loss; });
    if (it == t.end()) it = t.insert(t.end(), Verdict{p.size, p.loss});
    if (p.ratio < it->worst) it->worst = p.ratio, it->worst_window = p.window;
  }
  return t;
}

void print_header(const Options& o, const bench::MachineInfo& m) {
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
}

void print_tables(const Options& o, const bench::MachineInfo& m, const std::vector<Point>& pts) {
  print_header(o, m);
  bench::Table t({{"size", "", false}, {"loss", "", false}, {"window", "", false}, {"MB/s", "", false},
                  {"datagrams/s", "", false}, {"vs unlimited", "", false}, {"credit stalls", "", false},
                  {"acks", "", false}, {"probes", "", false}, {"lost", "", false}});
  for (const Point& p : pts) {
    t.add({bench::size_label(p.size), bench::fmt("%.0f %%", p.loss * 100), window_label(p.window),
           bench::Value(p.mb_s(), "%.0f"), bench::Value(p.d_s(), "%.0f"), bench::Value(p.ratio, "%.2f"), p.stalls,
           p.acks, p.probes, p.lost});
  }
  std::printf("%s", t.markdown().c_str());
  const bench::Target& target = bench::targets().at(kTarget);
  bench::Table v({{"target", "", false}, {"measured", "", false}, {"", "", false}});
  for (const Verdict& x : verdicts(pts)) {
    v.add({target.what + " (" + bench::size_label(x.size) + ", loss " + bench::fmt("%.0f %%)", x.loss * 100),
           bench::fmt("worst %.2f of unlimited", x.worst) + " (window " + std::to_string(x.worst_window) + ")",
           bench::met(x.met())});
  }
  std::printf("\n%s", v.markdown().c_str());
  std::fflush(stdout);
}

std::string points_csv(const std::vector<Point>& pts) {
  bench::Table t({{"size"}, {"loss"}, {"window"}, {"mb_s"}, {"datagrams_s"}, {"ratio_to_unlimited"},
                  {"credit_stalls"}, {"acks"}, {"probes"}, {"lost"}, {"ring_full_stalls"}, {"datagrams"}, {"reps"}});
  for (const Point& p : pts) {
    t.add({p.size, bench::Value(p.loss, "%g"), p.window, bench::Value(p.mb_s(), "%.3f"),
           bench::Value(p.d_s(), "%.1f"), bench::Value(p.ratio, "%.4f"), p.stalls, p.acks, p.probes, p.lost,
           p.ring_stalls, p.datagrams, p.bps.size()});
  }
  return t.csv();
}

std::string points_json(const std::vector<Point>& pts) {
  bench::Table t({{"size"}, {"loss"}, {"window"}, {"mb_s"}, {"datagrams_s"}, {"ratio_to_unlimited"},
                  {"credit_stalls"}, {"acks"}, {"probes"}, {"lost"}, {"ring_full_stalls"}});
  for (const Point& p : pts) {
    t.add({p.size, p.loss, p.window, p.mb_s(), p.d_s(), p.ratio, p.stalls, p.acks, p.probes, p.lost, p.ring_stalls});
  }
  return t.json();
}

std::string verdicts_json(const std::vector<Point>& pts) {
  const bench::Target& target = bench::targets().at(kTarget);
  bench::Table t({{"name"}, {"size"}, {"loss"}, {"worst_ratio"}, {"worst_window"}, {"target_ratio"}, {"met"}});
  for (const Verdict& x : verdicts(pts)) {
    t.add({target.what, x.size, x.loss, x.worst, x.worst_window, target.value, bench::Value::boolean(x.met())});
  }
  return t.json();
}

bool write_outputs(const Options& o, const bench::MachineInfo& m, const std::vector<Point>& pts) {
  const std::string json = bench::json_document({{"benchmark", "window"},
                                                 {"machine", bench::Value::json(bench::json_machine(m))},
                                                 {"point_ms", o.point_ms},
                                                 {"reps", o.reps},
                                                 {"points", bench::Value::json(points_json(pts))},
                                                 {"targets", bench::Value::json(verdicts_json(pts))}});
  return bench::write_file(o.common.out, "window.csv", points_csv(pts)) &&
         bench::write_file(o.common.out, "window.json", json);
}

std::vector<Point> all_points(const Options& o) {
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
  return pts;
}

// Every point, the repetitions alternated; false when one failed. NICs and
// OOB managers only after the fork.
bool measure(bench::Channel& ctl, const Options& o, std::vector<Point>& pts) {
  char token = 0;
  auto nic = clan::Nic::open({});
  auto mgr = clan::OobManager::start(oob_config("window-tx"));
  bool ok = nic && mgr && ctl.get(token, milliseconds(20000));
  if (!ok) std::fprintf(stderr, "bench_window: set-up failed\n");
  for (int rep = 0; rep < o.reps && ok; ++rep) {
    for (Point& p : pts) {
      bench::arm_watchdog(static_cast<unsigned>(o.point_ms / 1000 + 60));
      if (!(ok = run_point(ctl, **nic, **mgr, o, p))) break;
      std::fprintf(stderr, "[window] rep %d/%d %s loss %.0f%% window %-9s %8.0f MB/s %10.0f dgram/s\n", rep + 1,
                   o.reps, bench::size_label(p.size).c_str(), p.loss * 100, window_label(p.window).c_str(),
                   p.bps.back() / 1e6, p.dps.back());
    }
  }
  bench::arm_watchdog(30);
  ctl.put(Cmd{1, 0, 0, 0});
  return ok;
}

void ratios_to_unlimited(std::vector<Point>& pts) {
  for (Point& p : pts) {
    auto un = std::find_if(pts.begin(), pts.end(),
                           [&](const Point& x) { return x.size == p.size && x.loss == p.loss && x.window == 0; });
    p.ratio = un != pts.end() && un->mb_s() > 0 ? p.mb_s() / un->mb_s() : 0;
  }
}

}  // namespace

int main(int argc, char** argv) {
  bench::set_program_name("bench_window");
  const Options o = parse(argc, argv);
  bench::require_targets({kTarget});
  signal(SIGPIPE, SIG_IGN);
  bench::apply_spin_budget(o.common.spin_ns);
  g_runtime_dir = bench::make_runtime_dir("clan-window");
  const bench::MachineInfo machine = bench::machine_info();
  bench::ProcessPair pair([](bench::Channel ctl) { return run_peer(std::move(ctl)); });
  std::vector<Point> pts = all_points(o);
  const bool ok = measure(pair.control(), o, pts);
  const int code = pair.finish();
  if (!ok) return 1;

  ratios_to_unlimited(pts);
  print_tables(o, machine, pts);
  if (!o.common.out.empty()) {
    if (!write_outputs(o, machine, pts)) return 1;
    std::fprintf(stderr, "bench_window: results in %s/window.csv, window.json\n", o.common.out.c_str());
  }
  return code == 0 ? 0 : 1;
}
