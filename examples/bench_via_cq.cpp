// bench_via_cq: paper 001 Fig. 7 over via/ (the VIPL on the emulated CLAN
// network), between two real processes: the peer is a server with one
// receive CQ over 64 VIs; this process the client, with one outstanding
// 4-byte message on each of the first N connections; the server echoes
// from its CQ loop. Messages/s through the CQ, PIO and DMA alternated.
//
// Usage: bench_via_cq [--quick] [--out DIR] [--pin | --no-pin] [--spin-ns N]
//                     [--cq-conns N,N,...]
// Tables go to stdout (Markdown), progress to stderr; --out DIR writes
// DIR/via_cq.csv and .json.
#include <cstdio>

#include "bench/format.hpp"
#include "bench/peer.hpp"
#include "via_bench/program.hpp"

namespace {

using namespace via_bench;

const int kMaxConns = static_cast<int>(kCqMax);

// cq_reps repetitions over the connection counts, PIO and DMA alternated
// per point.
void measure(const Options& o, Driver& drv, Results& res) {
  for (int rep = 0; rep < o.cq_reps; ++rep) {
    for (int n : o.cq_conns) {
      bench::arm_watchdog(120);
      std::string line;
      for (const std::string name : {"pio", "dma"}) {
        CqPoint p = drv.cq(name == "pio" ? VIP_CLAN_TRANSFER_PIO : VIP_CLAN_TRANSFER_DMA, n, o.cq_seconds);
        p.name = name;
        p.rep = rep;
        res.cq.push_back(p);
        line += "  " + name + " " + bench::fmt("%.0f", p.rate());
      }
      std::fprintf(stderr, "[cq] %d/%d %2d connections msg/s:%s\n", rep + 1, o.cq_reps, n, line.c_str());
    }
  }
}

void print(const Options& o, const Results& r) {
  std::printf("## Completion queues (paper 001 Fig. 7): messages/s through one CQ\n\n");
  std::printf("Server (peer process): one receive CQ over %zu connected VIs (on a NIC of their own; the "
              "latency/bandwidth VI is on another); VipCQWait, VipRecvDone, echo (VipPostSend), repost. Client "
              "(this process): one outstanding %u-byte request on each of the first N connections, echoes taken "
              "from its own CQ and re-sent on the same connection. %.2f s per point after a warm-up; idle "
              "connections stay connected. Median of %d repetitions (min-max). Paper: no degradation with "
              "load.\n\n",
              kCqMax, kCqMessage, o.cq_seconds, o.cq_reps);
  bench::Table t({{"connections"}, {"PIO msg/s"}, {"DMA msg/s"}});
  for (int n : o.cq_conns) {
    t.add({n, bench::fmt("%.0f", r.cq_of("pio", n)) + bench::range_of(r.cq_all("pio", n), "%.0f"),
           bench::fmt("%.0f", r.cq_of("dma", n)) + bench::range_of(r.cq_all("dma", n), "%.0f")});
  }
  std::printf("%s", t.markdown().c_str());
}

// Rows only when 8 and kCqMax connections were both measured.
void verdicts(const Results& r, bench::Verdicts& v) {
  if (!(r.cq_of("pio", 8) > 0 && r.cq_of("pio", kMaxConns) > 0)) return;
  for (const std::string mode : {"pio", "dma"}) {
    const double at8 = r.cq_of(mode, 8), at_max = r.cq_of(mode, kMaxConns);
    const double keep = at8 > 0 ? at_max / at8 : 0;
    v.add("via_cq_64_over_8_" + mode, keep,
          bench::fmt("%.0f %%", 100 * keep) + bench::fmt(" (%.0f vs ", at_max) + bench::fmt("%.0f msg/s)", at8),
          bench::Scale::kPercent);
  }
}

bench::Table csv(const Results& r) {
  bench::Table t({{"table"}, {"series"}, {"rep"}, {"size_bytes"}, {"connections"}, {"samples"}, {"messages_per_s"},
                  {"seconds"}});
  for (const auto& p : r.cq) {
    t.add({"cq", p.name, p.rep, kCqMessage, p.conns, p.messages, bench::Value(p.rate(), "%.0f"),
           bench::Value(p.seconds, "%.6f")});
  }
  return t;
}

bench::Record json(const Results& r) {
  bench::Table t({{"series"}, {"rep"}, {"connections"}, {"messages"}, {"seconds"}, {"messages_per_s"},
                  {"server_echoes"}});
  for (const auto& p : r.cq) t.add({p.name, p.rep, p.conns, p.messages, p.seconds, p.rate(), p.server_echoes});
  return {{"cq", bench::Value::json(t.json())}};
}

bench::Record config(const Options& o) { return {{"cq_reps", o.cq_reps}, {"cq_seconds", o.cq_seconds}}; }

}  // namespace

const via_bench::Program via_bench::kProgram{
    "bench_via_cq", "VIA completion queues (paper 001 Fig. 7) over via/ on clan_emul",
    "via_cq", Parts{false, true}, true, {"via_cq_64_over_8_pio", "via_cq_64_over_8_dma"},
    measure, print, verdicts, csv, json, config};
