#include "fabric_bench/pingpong_report.hpp"

#include <cinttypes>
#include <cstdio>

#include "bench/format.hpp"
#include "bench/histogram.hpp"
#include "bench/json.hpp"
#include "bench/output.hpp"
#include "bench/table.hpp"
#include "bench/verdicts.hpp"
#include "fabric_bench/header.hpp"

namespace fabric_bench {

const std::vector<std::string> kPingTargets = {"fabric_pio_over_bare", "fabric_unix_over_pio"};

namespace {

std::vector<double> per_round_ratio(const LatencyResult& num, const LatencyResult& den) {
  std::vector<double> r;
  for (size_t i = 0; i < num.per_round.size() && i < den.per_round.size(); ++i) {
    if (den.per_round[i].p50 > 0) r.push_back(num.per_round[i].p50 / den.per_round[i].p50);
  }
  return r;
}

std::string range(const std::vector<double>& v) {
  if (v.size() < 2) return "";
  return " (rounds " + bench::ratio(bench::min_of(v)) + "-" + bench::ratio(bench::max_of(v)) + ")";
}

void print_round_trips(const PingResults& r) {
  const bench::Summary sp = bench::summarize(r.pio.all);
  std::printf("## Single-word ping-pong, round trip (us)\n\n");
  std::printf("Round trips, not one-way. A writes a word into B's memory, B sees it and writes it "
              "back; A timestamps around the whole exchange.\n\n");
  bench::Table t({{"transport", "", false}, {"round trips"}, {"p50"}, {"p90"}, {"p99"}, {"max"}, {"mean"},
                  {"p50 vs PIO"}});
  auto row = [&](const char* name, const bench::Summary& s) {
    t.add({name, s.count, bench::us(s.p50), bench::us(s.p90), bench::us(s.p99), bench::us(s.max),
           bench::us(s.mean), sp.p50 > 0 ? bench::ratio(s.p50 / sp.p50) : "-"});
  };
  row("bare cache line (floor)", bench::summarize(r.bare.all));
  row("clan PIO write_word + tripwire", sp);
  row("unix socketpair, 8 B", bench::summarize(r.unix_.all));
  std::printf("%s", t.markdown().c_str());
  std::printf("\nPIO round trips within 1.02 x p50: %.1f %%; wake-up system calls during the PIO "
              "blocks: %" PRIu64 " (both sides)\n\n",
              100.0 * bench::fraction_below(r.pio.all, static_cast<uint64_t>(sp.p50 * 1.02)), r.pio.wakes);
}

void print_per_round(const PingResults& r) {
  std::printf("Per alternation (p50, us):\n\n");
  bench::Table t({{"round"}, {"bare"}, {"PIO"}, {"unix"}, {"PIO / bare"}, {"unix / PIO"}});
  for (size_t i = 0; i < r.pio.per_round.size(); ++i) {
    const double b = r.bare.per_round[i].p50, p = r.pio.per_round[i].p50, u = r.unix_.per_round[i].p50;
    t.add({i + 1, bench::us(b), bench::us(p), bench::us(u), bench::ratio(p / b), bench::ratio(u / p)});
  }
  std::printf("%s", t.markdown().c_str());
}

bench::Verdicts verdicts(const PingResults& r) {
  const double pio = bench::summarize(r.pio.all).p50, bare = bench::summarize(r.bare.all).p50,
               unix_p50 = bench::summarize(r.unix_.all).p50;
  bench::Verdicts v;
  v.add("fabric_pio_over_bare", pio / bare, bench::ratio(pio / bare) + range(per_round_ratio(r.pio, r.bare)),
        bench::Scale::kRatio);
  v.add("fabric_unix_over_pio", unix_p50 / pio,
        bench::ratio(unix_p50 / pio) + range(per_round_ratio(r.unix_, r.pio)), bench::Scale::kRatio);
  return v;
}

std::string latency_csv(const PingResults& r) {
  bench::Table t({{"transport"}, {"bin_lo_ns"}, {"bin_hi_ns"}, {"count"}});
  auto hist = [&](const char* name, const LatencyResult& l) {
    bench::LogHistogram h;
    h.add_all(l.all);
    for (const auto& [lo, n] : h.bins()) t.add({name, lo, bench::LogHistogram::bin_hi(lo), n});
  };
  hist("bare", r.bare);
  hist("pio", r.pio);
  hist("unix", r.unix_);
  return t.csv();
}

std::string latency_json(const PingResults& r) {
  auto lat = [](const LatencyResult& l) {
    std::string rounds = "[";
    for (size_t i = 0; i < l.per_round.size(); ++i) rounds += (i ? ", " : "") + bench::json_summary(l.per_round[i]);
    return bench::Value::json(bench::json_object(
        {{"round_trip", bench::Value::json(bench::json_summary(bench::summarize(l.all)))},
         {"per_round", bench::Value::json(rounds + "]")}}));
  };
  return bench::json_object({{"bare", lat(r.bare)}, {"pio", lat(r.pio)}, {"unix", lat(r.unix_)}});
}

}  // namespace

void LatencyResult::add_round(const std::vector<uint64_t>& block) {
  per_round.push_back(bench::summarize(block));
  all.insert(all.end(), block.begin(), block.end());
}

void print_ping_header(const bench::CommonOptions& o, const PingResults& r) {
  char clock[160], rounds[200];
  std::snprintf(clock, sizeof clock, "steady_clock (%s), %.1f ns per now(), two per round trip",
                r.machine.clocksource.c_str(), r.clock_ns);
  std::snprintf(rounds, sizeof rounds,
                "%" PRIu64 " round trips per transport = %d alternations x %" PRIu64 ", each block after %" PRIu64
                " warm-up round trips",
                r.block * static_cast<uint64_t>(r.alternations), r.alternations, r.block, r.warm);
  print_header("clanorb raw fabric ping-pong benchmark (paper 000 sect. 3.2)", r.machine,
               {{"clock", clock}, pinned_row(o, r.pinned), spin_row(o, r.spin_ns), {"ping-pong", rounds}});
}

void print_ping_tables(const PingResults& r) {
  print_round_trips(r);
  print_per_round(r);
  std::printf("\n## Targets\n\n%s", verdicts(r).table().markdown().c_str());
  std::printf("\nPaper 000 (1999 hardware, for scale only): PIO round trip median 5.6 us.\n");
  std::fflush(stdout);
}

bool write_ping_results(const bench::CommonOptions& o, const PingResults& r) {
  const bench::Record config = {{"pinned", bench::Value::boolean(r.pinned)},
                                {"spin_budget_ns", r.spin_ns},
                                {"clock_overhead_ns", bench::Value(r.clock_ns)},
                                {"alternations", r.alternations},
                                {"block_round_trips", r.block},
                                {"warmup_round_trips", r.warm},
                                {"quick", bench::Value::boolean(o.quick)}};
  const std::string json = bench::json_document({{"benchmark", "fabric_pingpong"},
                                                 {"machine", bench::Value::json(bench::json_machine(r.machine))},
                                                 {"config", bench::Value::json(bench::json_object(config))},
                                                 {"latency", bench::Value::json(latency_json(r))},
                                                 {"targets", bench::Value::json(verdicts(r).json())}});
  return bench::write_file(o.out, "fabric_latency.csv", latency_csv(r)) &&
         bench::write_file(o.out, "fabric_pingpong.json", json);
}

}  // namespace fabric_bench
