#include "clan_wire_bench/report.hpp"

#include <cinttypes>
#include <cstdio>

#include "bench/format.hpp"
#include "bench/json.hpp"
#include "bench/output.hpp"
#include "bench/table.hpp"
#include "clan_wire_bench/layout.hpp"
#include "fabric_bench/header.hpp"

namespace clan_wire_bench {
namespace {

constexpr const char* kTransport = "clan wire";

bench::Table ping_table(const ClientResults& r, bool raw) {
  bench::Table t({{"transport", "", false}, {"wait", "", false}, {"size_bytes", "message"}, {"round_trips", "round trips"},
                  {"p50_us", "p50"}, {"p90_us", "p90"}, {"p99_us", "p99"}, {"max_us", "max"}, {"mean_us", "mean"}});
  for (const PingCell& c : r.ping) {
    const bench::Summary s = bench::summarize(c.all);
    auto us = [&](double ns) { return raw ? bench::Value(ns / 1e3, "%.3f") : bench::Value(bench::us(ns)); };
    t.add({kTransport, clan::wait_mode_name(c.mode), raw ? bench::Value(c.size) : bench::size_label(c.size), s.count,
           us(s.p50), us(s.p90), us(s.p99), us(s.max), us(s.mean)});
  }
  return t;
}

bench::Table stream_table(const ClientResults& r, const ClientOptions& o, bool raw) {
  bench::Table t({{"transport", "", false}, {"wait", "", false}, {"size_bytes", "write"}, {"writes"}, {"rounds"},
                  {"gb_per_s", "GB/s (median)"}, {"gb_per_s_min", "min"}, {"gb_per_s_max", "max"}});
  for (const StreamCell& c : r.stream) {
    std::vector<double> gb;
    for (double b : c.bytes_per_s) gb.push_back(b / 1e9);
    t.add({kTransport, clan::wait_mode_name(c.mode), raw ? bench::Value(o.chunk) : bench::size_label(o.chunk),
           o.chunks, gb.size(), bench::Value(bench::median(gb), "%.3f"), bench::Value(bench::min_of(gb), "%.3f"),
           bench::Value(bench::max_of(gb), "%.3f")});
  }
  return t;
}

std::string per_round_json(const ClientResults& r) {
  std::string out = "[";
  for (const PingCell& c : r.ping) {
    std::string rounds = "[";
    for (size_t i = 0; i < c.per_round.size(); ++i) rounds += (i ? ", " : "") + bench::json_summary(c.per_round[i]);
    out += (out.size() > 1 ? ", " : "") +
           bench::json_object({{"wait", clan::wait_mode_name(c.mode)}, {"size_bytes", c.size},
                               {"round_trip", bench::Value::json(bench::json_summary(bench::summarize(c.all)))},
                               {"per_round", bench::Value::json(rounds + "]")}});
  }
  return out + "]";
}

}  // namespace

void print_wire_header(const bench::CommonOptions& o, const ClientOptions& c, const RunInfo& info,
                       const ClientResults& r) {
  char clock[160], work[240];
  std::snprintf(clock, sizeof clock, "steady_clock (%s), %.1f ns per now(), two per round trip",
                info.machine.clocksource.c_str(), info.clock_ns);
  std::snprintf(work, sizeof work,
                "%" PRIu64 " round trips per wait mode and size per round (after %" PRIu64
                " warm-up), %d rounds alternating the modes; streams of %u writes of %u B",
                c.roundtrips, c.warm, c.rounds, c.chunks, c.chunk);
  fabric_bench::print_header("clan_emul remote wire: ping-pong and stream over libfabric", info.machine,
                             {{"topology", info.topology},
                              {"server wire", r.server_address},
                              {"client wire", r.client_address},
                              {"clock", clock},
                              fabric_bench::spin_row(o, r.spin_ns),
                              {"work", work}});
}

void print_wire_tables(const ClientResults& r, const ClientOptions& o) {
  std::printf("## Round trip (us): message + bell word written into the other side, echoed the same way\n\n");
  std::printf("%s\n", ping_table(r, false).markdown().c_str());
  if (!r.stream.empty()) {
    std::printf("## Stream: writes into a %zu-slot ring, one credit word back per chunk seen\n\n", kRingSlots);
    std::printf("%s\n", stream_table(r, o, false).markdown().c_str());
  }
  std::fflush(stdout);
}

bool write_wire_results(const bench::CommonOptions& o, const ClientOptions& c, const RunInfo& info,
                        const ClientResults& r) {
  const bench::Record config = {{"topology", info.topology},
                                {"server_wire", r.server_address},
                                {"client_wire", r.client_address},
                                {"spin_budget_ns", r.spin_ns},
                                {"clock_overhead_ns", bench::Value(info.clock_ns)},
                                {"rounds", c.rounds},
                                {"round_trips_per_round", c.roundtrips},
                                {"warmup_round_trips", c.warm},
                                {"stream_writes", c.chunks},
                                {"stream_write_bytes", c.chunk},
                                {"quick", bench::Value::boolean(o.quick)}};
  const std::string json = bench::json_document(
      {{"benchmark", "clan_wire"},
       {"machine", bench::Value::json(bench::json_machine(info.machine))},
       {"config", bench::Value::json(bench::json_object(config))},
       {"pingpong", bench::Value::json(ping_table(r, true).json())},
       {"pingpong_rounds", bench::Value::json(per_round_json(r))},
       {"stream", bench::Value::json(stream_table(r, c, true).json())}});
  return bench::write_file(o.out, "clan_wire_pingpong.csv", ping_table(r, true).csv()) &&
         bench::write_file(o.out, "clan_wire_stream.csv", stream_table(r, c, true).csv()) &&
         bench::write_file(o.out, "clan_wire.json", json);
}

}  // namespace clan_wire_bench
