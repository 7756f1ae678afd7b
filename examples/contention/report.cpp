#include "contention/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "bench/format.hpp"
#include "bench/json.hpp"
#include "bench/output.hpp"
#include "bench/table.hpp"
#include "bench/targets.hpp"
#include "clan_emul/nic.hpp"

namespace contention {

const char* const kOvercommitTarget = "contention_overcommit8_over_96";
const char* const kFairnessTarget = "contention_min_client_over_fair_share";
const char* const kFixedTarget = "contention_96_frames_over_fixed";

std::vector<std::string> target_ids() { return {kOvercommitTarget, kFairnessTarget, kFixedTarget}; }

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const PointResult* find(const std::vector<PointResult>& pts, Config c, uint32_t frames, clan::Replacement r,
                        uint32_t size, uint32_t clients) {
  for (const PointResult& p : pts) {
    const PointSpec& s = p.spec;
    const bool policy_matters = c != Config::kFixed && c != Config::kOneVn && frames < s.clients;
    if (p.error.empty() && s.config == c && s.frames == frames && s.size == size && s.clients == clients &&
        (!policy_matters || s.replacement == r))
      return &p;
  }
  return nullptr;
}

uint32_t most_clients(const std::vector<PointResult>& pts) {
  uint32_t n = 0;
  for (const PointResult& p : pts) n = std::max(n, p.spec.clients);
  return n;
}

Verdict overcommit(const std::vector<PointResult>& pts, uint32_t size, clan::Replacement r) {
  const uint32_t n = most_clients(pts);
  const PointResult* a = find(pts, Config::kMt, 8, r, size, n);
  const PointResult* b = find(pts, Config::kMt, 96, r, size, n);
  const bool ok = a && b && n > 8 && b->aggregate() > 0;
  return {kOvercommitTarget, size, r, ok ? a->aggregate() / b->aggregate() : kNaN,
          ok ? bench::fmt("%.0f", a->aggregate()) + " / " + bench::fmt("%.0f msg/s", b->aggregate()) + " at " +
                   std::to_string(n) + " clients"
             : "needs MT at more than 8 clients"};
}

// The worst client against its fair share, over the 8-frame points of ST
// and MT, the configurations that re-map.
Verdict fairness(const std::vector<PointResult>& pts, uint32_t size, clan::Replacement r) {
  Verdict v{kFairnessTarget, size, r, kNaN, "needs ST or MT with 8 frames"};
  for (const Config c : {Config::kSt, Config::kMt}) {
    for (const PointResult& p : pts) {
      if (find(pts, c, 8, r, size, p.spec.clients) != &p || p.aggregate() <= 0) continue;
      const double share = p.min_rate() / (p.aggregate() / p.spec.clients);
      if (std::isnan(v.measured) || share < v.measured) {
        v.measured = share;
        v.detail = std::string("worst: ") + (c == Config::kSt ? "ST" : "MT") + " at " +
                   std::to_string(p.spec.clients) + " clients";
      }
    }
  }
  return v;
}

Verdict fixed(const std::vector<PointResult>& pts, uint32_t size) {
  const uint32_t n = most_clients(pts);
  const PointResult* a = find(pts, Config::kMt, 96, clan::Replacement::kLru, size, n);
  const PointResult* b = find(pts, Config::kFixed, 96, clan::Replacement::kLru, size, n);
  const bool ok = a && b && b->aggregate() > 0;
  return {kFixedTarget, size, clan::NicConfig{}.replacement, ok ? a->aggregate() / b->aggregate() : kNaN,
          ok ? std::to_string(n) + " clients" : "needs MT and fixed points"};
}

std::vector<uint32_t> sizes(const std::vector<PointResult>& pts) {
  std::vector<uint32_t> s;
  for (const PointResult& p : pts)
    if (std::find(s.begin(), s.end(), p.spec.size) == s.end()) s.push_back(p.spec.size);
  return s;
}

std::string frames_label(const PointSpec& s) { return s.config == Config::kFixed ? "-" : std::to_string(s.frames); }

// The replacement policy only when it can matter: some endpoints beyond
// the frames.
std::string policy_label(const PointSpec& s) {
  const bool matters = s.config != Config::kFixed && s.config != Config::kOneVn && s.frames < s.clients;
  return matters ? clan::to_string(s.replacement) : "-";
}

// "min-max" of the repetitions' aggregates.
std::string range(const std::vector<double>& v) {
  if (v.empty()) return "";
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return bench::fmt("%.0f", *lo) + "-" + bench::fmt("%.0f", *hi);
}

bench::Table point_table(const std::vector<PointResult>& pts, bool files) {
  bench::Table t({{"config", "", false}, {"frames", "", false}, {"replacement", "", false}, {"size"}, {"clients"},
                  {"min_msg_s", "min msg/s"}, {"median_msg_s", "median msg/s"}, {"max_msg_s", "max msg/s"},
                  {"aggregate_msg_s", "aggregate msg/s"}, {"aggregate_mb_s", "MB/s"}, {"remaps_s", "remaps/s"},
                  {"evictions_s", "evictions/s"}, {"max_round_trip_ms", "max RT ms"},
                  {"aggregate_range", "aggregate of reps", false},
                  {"reps"}, {"error", "", false}});
  for (const PointResult& p : pts) {
    const PointSpec& s = p.spec;
    const char* f = files ? "%.1f" : "%.0f";
    t.add({to_string(s.config), frames_label(s), policy_label(s), s.size, s.clients, bench::Value(p.min_rate(), f),
           bench::Value(p.median_rate(), f), bench::Value(p.max_rate(), f), bench::Value(p.aggregate(), f),
           bench::Value(p.mb_s(), files ? "%.3f" : "%.1f"), bench::Value(p.remaps_per_s(), f),
           bench::Value(static_cast<double>(p.evictions) / p.seconds, f),
           bench::Value(static_cast<double>(p.max_round_trip_ns) / 1e6, files ? "%.3f" : "%.1f"), range(p.aggregates),
           p.aggregates.size(), p.error});
  }
  return t;
}

std::string verdict_label(const Verdict& v) {
  const bool policy = v.target != kFixedTarget;
  return bench::targets().at(v.target).what + " (" + bench::size_label(v.size) +
         (policy ? std::string(", ") + clan::to_string(v.replacement) : std::string()) + ")";
}

}  // namespace

bool Verdict::met() const { return bench::targets().met(target, measured); }

std::vector<Verdict> verdicts(const std::vector<PointResult>& pts) {
  std::vector<Verdict> out;
  for (uint32_t size : sizes(pts)) {
    for (clan::Replacement r : {clan::Replacement::kLru, clan::Replacement::kRandom}) {
      out.push_back(overcommit(pts, size, r));
      out.push_back(fairness(pts, size, r));
    }
    out.push_back(fixed(pts, size));
  }
  return out;
}

void print_tables(const bench::MachineInfo& m, const Timing& t, int64_t spin_ns, const std::string& spin_source,
                  const std::vector<PointResult>& pts) {
  std::printf("# clanorb contention benchmark (paper 004 sect. 6.4, Figs. 6-7)\n\n| | |\n|---|---|\n");
  std::printf("| date | %s |\n| CPU | %s |\n| cores | %ld online, %d allowed |\n| kernel | %s |\n",
              m.date_utc.c_str(), m.cpu_model.c_str(), m.cores_online, m.cores_allowed, m.kernel.c_str());
  std::printf("| workload | one server process, N client processes, each a stream of requests (one outstanding) "
              "answered with %u bytes; server NIC remap cost %lld us |\n",
              kReplyBytes,
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::microseconds>(clan::NicConfig{}.remap_cost).count()));
  std::printf("| points | %d ms warm-up, %d ms measured, each point repeated (alternated) and its repetition with the "
              "median aggregate shown; per-client rates are replies/s over the window |\n",
              t.warm_ms, t.measure_ms);
  std::printf("| spin budget | %lld ns%s |\n", static_cast<long long>(spin_ns), spin_source.c_str());
  std::printf("| compiler | %s |\n\n", m.compiler.c_str());
  std::printf("%s", point_table(pts, false).markdown().c_str());
  bench::Table v({{"target", "", false}, {"measured", "", false}, {"", "", false}, {"", "", false}});
  for (const Verdict& x : verdicts(pts)) {
    v.add({verdict_label(x), std::isnan(x.measured) ? "not measured" : bench::fmt("%.2f", x.measured), x.detail,
           std::isnan(x.measured) ? "-" : bench::met(x.met())});
  }
  std::printf("\n%s", v.markdown().c_str());
  std::fflush(stdout);
}

bool write_outputs(const std::string& dir, const bench::MachineInfo& m, const Timing& t,
                   const std::vector<PointResult>& pts) {
  bench::Table v({{"id"}, {"name"}, {"size"}, {"replacement"}, {"measured"}, {"target"}, {"met"}});
  for (const Verdict& x : verdicts(pts)) {
    v.add({x.target, verdict_label(x), x.size, clan::to_string(x.replacement), x.measured,
           bench::targets().at(x.target).value, bench::Value::boolean(x.met())});
  }
  const std::string json = bench::json_document({{"benchmark", "contention"},
                                                 {"machine", bench::Value::json(bench::json_machine(m))},
                                                 {"warm_ms", t.warm_ms},
                                                 {"measure_ms", t.measure_ms},
                                                 {"points", bench::Value::json(point_table(pts, true).json())},
                                                 {"targets", bench::Value::json(v.json())}});
  return bench::write_file(dir, "contention.csv", point_table(pts, true).csv()) &&
         bench::write_file(dir, "contention.json", json);
}

}  // namespace contention
