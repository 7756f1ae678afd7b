#include "wire_bench/report.hpp"

#include <cinttypes>
#include <cstdio>
#include <string>

#include "bench/format.hpp"
#include "bench/json.hpp"
#include "bench/output.hpp"
#include "bench/table.hpp"
#include "fabric_bench/header.hpp"

namespace wire_bench {
namespace {

// The row every wire is compared with: the tcp socket (wires()[0]).
constexpr size_t kReference = 0;

const LatencyCell* reference(const WireResults& r, const LatencyCell& c) {
  for (const auto& x : r.latency) {
    if (x.wire == kReference && x.wait == c.wait && x.size == c.size) return &x;
  }
  return nullptr;
}

const BandwidthCell* reference(const WireResults& r, const BandwidthCell& c) {
  for (const auto& x : r.bandwidth) {
    if (x.wire == kReference && x.wait == c.wait && x.size == c.size) return &x;
  }
  return nullptr;
}

double p50_ratio(const WireResults& r, const LatencyCell& c) {
  const LatencyCell* ref = reference(r, c);
  const double base = ref ? bench::summarize(ref->all).p50 : 0;
  return base > 0 ? bench::summarize(c.all).p50 / base : 0;
}

double bw_ratio(const WireResults& r, const BandwidthCell& c) {
  const BandwidthCell* ref = reference(r, c);
  const double base = ref ? bench::median(ref->per_round) : 0;
  return base > 0 ? bench::median(c.per_round) / base : 0;
}

std::string round_p50s(const LatencyCell& c) {
  std::string s;
  for (const auto& x : c.per_round) s += (s.empty() ? "" : " / ") + bench::fmt("%.1f", x.p50 / 1000.0);
  return s;
}

std::string rounds_mbs(const BandwidthCell& c, const char* sep) {
  std::string s;
  for (double x : c.per_round) s += (s.empty() ? "" : sep) + bench::mbs(x);
  return s;
}

const char* ratio_heading() {
  static const std::string h = std::string("p50 / ") + wires()[kReference].label;
  return h.c_str();
}

void print_latency(const WireResults& r) {
  std::printf("## Round trips between the hosts (us)\n\n");
  std::printf("Client in A, server in B. The client sends a message, the server receives it whole and sends it "
              "back; the client timestamps around the whole exchange. Both sides wait the same way: busy poll "
              "spins on a call that never sleeps, blocking sleeps in the kernel.\n\n");
  bench::Table t({{"wire", "", false}, {"wait", "", false}, {"size"}, {"round trips"}, {"p50"}, {"p90"}, {"p99"},
                  {"max"}, {"mean"}, {ratio_heading()}, {"p50 of each round", "", false}});
  for (const auto& c : r.latency) {
    const bench::Summary s = bench::summarize(c.all);
    const double ratio = p50_ratio(r, c);
    t.add({wires()[c.wire].label, wait_name(c.wait), bench::size_label(c.size), s.count, bench::us(s.p50),
           bench::us(s.p90), bench::us(s.p99), bench::us(s.max), bench::us(s.mean),
           ratio > 0 ? bench::ratio(ratio) : "-", round_p50s(c)});
  }
  std::printf("%s\n", t.markdown().c_str());
}

void print_bandwidth(const WireResults& r) {
  std::printf("## Bandwidth from A to B (MB/s)\n\n");
  std::printf("The client sends the messages back to back; the clock stops when the server's acknowledgement "
              "of the last one arrives. Median of the rounds.\n\n");
  bench::Table t({{"wire", "", false}, {"wait", "", false}, {"message"}, {"MiB per round"}, {"MB/s"},
                  {std::string("/ ") + wires()[kReference].label}, {"each round", "", false}});
  for (const auto& c : r.bandwidth) {
    const double ratio = bw_ratio(r, c);
    t.add({wires()[c.wire].label, wait_name(c.wait), bench::size_label(c.size), c.bytes_per_round >> 20,
           bench::mbs(bench::median(c.per_round)), ratio > 0 ? bench::ratio(ratio) : "-", rounds_mbs(c, ", ")});
  }
  std::printf("%s\n", t.markdown().c_str());
}

bench::Table latency_data(const WireResults& r) {
  bench::Table t({{"wire"}, {"wait"}, {"size_bytes"}, {"round_trips"}, {"p50_us"}, {"p90_us"}, {"p99_us"},
                  {"max_us"}, {"mean_us"}, {"p50_vs_tcp"}, {"p50_us_per_round"}});
  for (const auto& c : r.latency) {
    const bench::Summary s = bench::summarize(c.all);
    const double ratio = p50_ratio(r, c);
    std::string rounds;
    for (const auto& x : c.per_round) rounds += (rounds.empty() ? "" : " ") + bench::fmt("%.3f", x.p50 / 1000.0);
    t.add({wires()[c.wire].name, c.wait == Wait::kBusy ? "busy" : "blocking", c.size, s.count,
           bench::Value(s.p50 / 1000.0, "%.3f"), bench::Value(s.p90 / 1000.0, "%.3f"),
           bench::Value(s.p99 / 1000.0, "%.3f"), bench::Value(s.max / 1000.0, "%.3f"),
           bench::Value(s.mean / 1000.0, "%.3f"), ratio > 0 ? bench::Value(ratio, "%.3f") : bench::Value(), rounds});
  }
  return t;
}

bench::Table bandwidth_data(const WireResults& r) {
  bench::Table t({{"wire"}, {"wait"}, {"size_bytes"}, {"bytes_per_round"}, {"mb_per_s"}, {"mb_vs_tcp"},
                  {"mb_per_s_per_round"}});
  for (const auto& c : r.bandwidth) {
    const double ratio = bw_ratio(r, c);
    t.add({wires()[c.wire].name, c.wait == Wait::kBusy ? "busy" : "blocking", c.size, c.bytes_per_round,
           bench::Value(bench::median(c.per_round) / 1e6, "%.1f"),
           ratio > 0 ? bench::Value(ratio, "%.3f") : bench::Value(), rounds_mbs(c, " ")});
  }
  return t;
}

}  // namespace

void print_wire_header(const ClientOptions& o, const WireResults& r) {
  std::string names;
  for (size_t w : o.wires) names += (names.empty() ? "" : ", ") + std::string(wires()[w].label);
  char rounds[200], clock[160];
  std::snprintf(rounds, sizeof rounds,
                "%" PRIu64 " per wire, wait and size = %d alternations x %" PRIu64 ", each after %" PRIu64
                " warm-up round trips",
                r.block * static_cast<uint64_t>(r.alternations), r.alternations, r.block, r.warm);
  std::snprintf(clock, sizeof clock, "steady_clock (%s), %.1f ns per now(), two per round trip",
                r.machine.clocksource.c_str(), r.clock_ns);
  fabric_bench::print_header("Wire ping-pong and bandwidth between two hosts", r.machine,
                             {{"server", r.server + " (control channel)"},
                              {"wires", names},
                              {"round trips", rounds},
                              {"clock", clock}});
}

void print_wire_tables(const WireResults& r) {
  print_latency(r);
  print_bandwidth(r);
  std::fflush(stdout);
}

bool write_wire_results(const ClientOptions& o, const WireResults& r) {
  const bench::Record config = {{"server", r.server},
                                {"alternations", r.alternations},
                                {"block_round_trips", r.block},
                                {"warmup_round_trips", r.warm},
                                {"clock_overhead_ns", bench::Value(r.clock_ns)},
                                {"quick", bench::Value::boolean(r.quick)}};
  const bench::Table lat = latency_data(r), bw = bandwidth_data(r);
  const std::string json = bench::json_document({{"benchmark", "wire"},
                                                 {"machine", bench::Value::json(bench::json_machine(r.machine))},
                                                 {"config", bench::Value::json(bench::json_object(config))},
                                                 {"latency", bench::Value::json(lat.json())},
                                                 {"bandwidth", bench::Value::json(bw.json())}});
  return bench::write_file(o.common.out, "wire_latency.csv", lat.csv()) &&
         bench::write_file(o.common.out, "wire_bandwidth.csv", bw.csv()) &&
         bench::write_file(o.common.out, "wire.json", json);
}

}  // namespace wire_bench
