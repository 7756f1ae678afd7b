// bench_via_latency: paper 001 Table 1 over via/ (the VIPL on the emulated
// CLAN network), between two real processes: half round trips of 0, 4, 40,
// 128 bytes and 64 KiB, VIA with the transfer mode forced to PIO and to DMA
// (VipClanSetViAttributes), waiting with VipRecvWait, beside a raw DMQ
// ping-pong (DmqSender/DmqReceiver, PIO) measured in the same run.
// Alternated DMQ, VIA PIO, VIA DMA per size and round. Reported as HALF
// round trips (round trip / 2), like the paper.
//
// Usage: bench_via_latency [--quick] [--out DIR] [--pin | --no-pin] [--spin-ns N]
// By default A and B are pinned to two different CPUs (after the
// connections are made, so the DMA engine threads stay unpinned): on a
// 2-vCPU machine an unpinned ping-pong can settle with both processes on one
// CPU, where each waiter spins out its whole budget while the peer it waits
// for cannot run. The tables report futex sleeps per round trip and CPU
// sharing so such a regime is visible. Tables go to stdout (Markdown),
// progress to stderr; --out DIR writes DIR/via_latency.csv and .json.
#include <algorithm>
#include <cstdio>

#include "bench/format.hpp"
#include "bench/json.hpp"
#include "bench/peer.hpp"
#include "via_bench/program.hpp"

namespace {

using namespace via_bench;

const char* const kSeries[] = {"dmq", "via_pio", "via_dma"};

uint64_t total_of(const Options& o, uint64_t size) {
  return size >= 65536 ? std::max<uint64_t>(o.roundtrips / 10, 100) : o.roundtrips;
}

// One block of each series at `size`, alternated; returns the progress line.
std::string measure_point(const Options& o, Driver& drv, Results& res, uint64_t size) {
  const uint64_t block = std::max<uint64_t>(1, total_of(o, size) / static_cast<uint64_t>(o.rounds));
  const uint64_t warm = std::max<uint64_t>(50, block / 10);
  std::string line;
  for (const std::string name : kSeries) {
    std::vector<uint64_t> v;
    v.reserve(block);
    const bench::BlockActivity act =
        name == "dmq" ? drv.dmq_lat(size, warm, block, v)
                      : drv.via_lat(name == "via_pio" ? VIP_CLAN_TRANSFER_PIO : VIP_CLAN_TRANSFER_DMA, size, warm,
                                    block, v);
    const auto sm = bench::summarize(v);
    LatSeries& s = res.series(name, size);
    s.rt.insert(s.rt.end(), v.begin(), v.end());
    s.round_p50.push_back(sm.p50);
    s.sleeps += act.a.sleeps + act.b.sleeps;
    s.exchanges += act.exchanges;
    s.shared_cpu_blocks += act.shared_cpu() ? 1 : 0;
    line += "  " + name + " " + bench::us(sm.p50 / 2) + bench::fmt(" (%.2f sleeps/rt)", act.sleeps_per_exchange());
  }
  return line;
}

void measure(const Options& o, Driver& drv, Results& res) {
  for (int round = 0; round < o.rounds; ++round) {
    for (uint64_t size : kLatSizes) {
      bench::arm_watchdog(120);
      const std::string line = measure_point(o, drv, res, size);
      std::fprintf(stderr, "[latency] round %d/%d %6s half-RT p50 us:%s\n", round + 1, o.rounds,
                   bench::size_label(size).c_str(), line.c_str());
    }
  }
}

bench::Table latency_table(const Results& r) {
  bench::Table t({{"bytes"}, {"raw DMQ p50"}, {"p99"}, {"VIA PIO p50"}, {"p99"}, {"VIA DMA p50"}, {"p99"},
                  {"PIO / DMQ (rounds)"}, {"DMA / PIO"}});
  for (uint64_t s : kLatSizes) {
    const auto d = r.half("dmq", s), p = r.half("via_pio", s), a = r.half("via_dma", s);
    const auto rr = r.round_ratio_range("via_pio", "dmq", s);
    t.add({bench::size_label(s), bench::us(d.p50), bench::us(d.p99), bench::us(p.p50), bench::us(p.p99),
           bench::us(a.p50), bench::us(a.p99),
           (d.p50 > 0 ? bench::ratio(p.p50 / d.p50) : "-") + " (" + bench::ratio(rr.first) + "-" +
               bench::ratio(rr.second) + ")",
           p.p50 > 0 ? bench::ratio(a.p50 / p.p50) : "-"});
  }
  return t;
}

bench::Table regime_table(const Results& r) {
  bench::Table t({{"bytes"}, {"raw DMQ sleeps/rt"}, {"VIA PIO sleeps/rt"}, {"VIA DMA sleeps/rt"},
                  {"shared-CPU blocks DMQ, PIO, DMA"}});
  for (uint64_t s : kLatSizes) {
    const LatSeries *d = r.find_series("dmq", s), *p = r.find_series("via_pio", s), *a = r.find_series("via_dma", s);
    if (!d || !p || !a) continue;
    t.add({bench::size_label(s), bench::fmt("%.2f", d->sleeps_per_rt()), bench::fmt("%.2f", p->sleeps_per_rt()),
           bench::fmt("%.2f", a->sleeps_per_rt()),
           std::to_string(d->shared_cpu_blocks) + ", " + std::to_string(p->shared_cpu_blocks) + ", " +
               std::to_string(a->shared_cpu_blocks)});
  }
  return t;
}

void print(const Options& o, const Results& r) {
  std::printf("## Latency (paper 001 Table 1): HALF round trips, us\n\n");
  std::printf("Ping-pong; one sample = one whole round trip, halved: post the send; while it is on its way, "
              "repost the previous echo's receive buffer and reap the send with VipSendWait; VipRecvWait for "
              "the echo. The peer waits, echoes, then reposts and reaps. "
              "%llu round trips per point (64 KiB: %llu), in %d alternating rounds of raw DMQ, VIA PIO, VIA "
              "DMA, each after a warm-up. Raw DMQ: DmqSender::send (PIO) / DmqReceiver::receive. "
              "Paper (650 MHz PIII, real CLAN): PIO 3.4/4.6/4.7, DMA 4.4/6.4/6.8 us for 0/4/40 B.\n\n",
              static_cast<unsigned long long>(o.roundtrips), static_cast<unsigned long long>(total_of(o, 65536)),
              o.rounds);
  std::printf("%s", latency_table(r).markdown().c_str());
  std::printf("\nWaiting regime: futex sleeps per round trip (both processes; 0 = both spun, about 2 = both "
              "slept every exchange) and blocks in which A and B were seen on the same CPU, out of %d per "
              "series.\n\n%s",
              o.rounds, regime_table(r).markdown().c_str());
}

void verdicts(const Results& r, bench::Verdicts& v) {
  const double d0 = r.half("dmq", 0).p50, p0 = r.half("via_pio", 0).p50;
  const auto rr0 = r.round_ratio_range("via_pio", "dmq", 0);
  v.add("via_pio_0b_rt_over_dmq", d0 > 0 ? p0 / d0 : 0,
        bench::ratio(d0 > 0 ? p0 / d0 : 0) + " (" + bench::us(2 * p0) + " vs " + bench::us(2 * d0) + " us; rounds " +
            bench::ratio(rr0.first) + "-" + bench::ratio(rr0.second) + ")",
        bench::Scale::kRatio);
  double worst = 0;
  std::string detail;
  for (uint64_t s : kLatSizes) {
    if (s > 128) continue;
    const double p = r.half("via_pio", s).p50, d = r.half("via_dma", s).p50;
    const double ratio = p > 0 ? d / p : 0;
    worst = detail.empty() ? ratio : std::min(worst, ratio);
    detail += (detail.empty() ? "" : ", ") + std::to_string(s) + " B " + bench::ratio(d / p);
  }
  v.add("via_dma_over_pio_upto_128b", worst, detail, bench::Scale::kRatio);
}

bench::Table csv(const Results& r) {
  bench::Table t({{"table"}, {"series"}, {"size_bytes"}, {"connections"}, {"samples"}, {"half_rt_p50_ns"},
                  {"half_rt_p90_ns"}, {"half_rt_p99_ns"}, {"half_rt_mean_ns"}, {"half_rt_max_ns"},
                  {"sleeps_per_exchange"}});
  for (const auto& s : r.lat) {
    const auto h = r.half(s.name, s.size);
    t.add({"latency", s.name, s.size, 1, h.count, bench::Value(h.p50, "%.0f"), bench::Value(h.p90, "%.0f"),
           bench::Value(h.p99, "%.0f"), bench::Value(h.mean, "%.0f"), bench::Value(h.max, "%.0f"),
           bench::Value(s.sleeps_per_rt(), "%.3f")});
  }
  return t;
}

bench::Record json(const Results& r) {
  bench::Table t({{"series"}, {"size"}, {"half_round_trip"}, {"sleeps_per_round_trip"}, {"shared_cpu_blocks"},
                  {"round_p50_ns"}});
  for (const auto& s : r.lat) {
    std::string rounds = "[";
    for (size_t k = 0; k < s.round_p50.size(); ++k) rounds += (k ? ", " : "") + bench::json_num(s.round_p50[k] / 2);
    t.add({s.name, s.size, bench::Value::json(bench::json_summary(r.half(s.name, s.size))), s.sleeps_per_rt(),
           s.shared_cpu_blocks, bench::Value::json(rounds + "]")});
  }
  return {{"latency_half_round_trip", bench::Value::json(t.json())}};
}

bench::Record config(const Options& o) {
  return {{"round_trips", o.roundtrips}, {"rounds", o.rounds}, {"latency_wait", "VipRecvWait"}};
}

}  // namespace

const via_bench::Program via_bench::kProgram{
    "bench_via_latency", "VIA latency (paper 001 Table 1) over via/ on clan_emul",
    "via_latency", Parts{true, false}, false, {"via_pio_0b_rt_over_dmq", "via_dma_over_pio_upto_128b"},
    measure, print, verdicts, csv, json, config};
