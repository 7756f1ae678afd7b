#include "fabric_bench/stream_report.hpp"

#include <cstdio>

#include "bench/format.hpp"
#include "bench/json.hpp"
#include "bench/output.hpp"
#include "bench/stats.hpp"
#include "bench/table.hpp"
#include "bench/verdicts.hpp"
#include "fabric_bench/header.hpp"
#include "fabric_bench/memcpy_bandwidth.hpp"

namespace fabric_bench {

const std::vector<uint64_t> kStreamSizes = {16, 64, 256, 1024, 4096, 16384, 65536};
const std::vector<std::string> kStreamTargets = {"fabric_dmq_pio_64k_over_memcpy", "fabric_dmq_dma_64k_over_memcpy"};

namespace {

std::vector<double> bw_values(const StreamResults& res, const std::string& t, uint64_t size) {
  std::vector<double> v;
  for (const BwPoint& p : res.bw) {
    if (p.transport == t && p.size == size) v.push_back(p.bytes_per_s());
  }
  return v;
}

double median_wakes_per_msg(const StreamResults& res, const std::string& t, uint64_t size) {
  std::vector<double> v;
  for (const BwPoint& p : res.bw) {
    if (p.transport == t && p.size == size && p.messages) {
      v.push_back(static_cast<double>(p.wakes) / static_cast<double>(p.messages));
    }
  }
  return bench::median(v);
}

// DMQ 64 KiB / large memcpy, per repetition (each memcpy is measured just before that point).
std::vector<double> per_rep_memcpy_ratio(const StreamResults& res, const std::string& t) {
  std::vector<double> v;
  for (const BwPoint& p : res.bw) {
    if (p.transport == t && p.size == kMemcpyBlock && static_cast<size_t>(p.rep) < res.memcpy_large_bps.size()) {
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
  return bench::mbs(bench::median(v)) + " (" + bench::mbs(bench::min_of(v)) + "-" + bench::mbs(bench::max_of(v)) +
         ")";
}

std::string share(double num, double den) { return den > 0 ? bench::ratio(num / den) : "-"; }

void print_intro(const StreamSettings& s, const StreamResults& r) {
  std::printf("## DMQ streaming bandwidth (MB/s = 10^6 B/s, payload bytes)\n\n");
  std::printf("Median over %d repetition(s), (min-max) when repeated. Single-thread memcpy, "
              "measured in this run: %s blocks far beyond the caches %s MB/s (%s): the memory "
              "bandwidth the targets and the '/ memcpy' columns use; a cache-resident %s block "
              "%s MB/s (%s), for scale: no copy between two cores can approach it.\n\n",
              s.reps, bench::size_label(kMemcpyLarge).c_str(), bench::mbs(bench::median(r.memcpy_large_bps)).c_str(),
              bw_cell(r.memcpy_large_bps).c_str(), bench::size_label(kMemcpyBlock).c_str(),
              bench::mbs(bench::median(r.memcpy_bps)).c_str(), bw_cell(r.memcpy_bps).c_str());
  std::printf("bare ring: the DMQ's framing in plain shared memory, pure spinning, no clan_emul (the "
              "floor). wakes/msg: futex wake-up system calls per message, both sides (median).\n\n");
}

void print_bandwidth(const StreamSettings& s, const StreamResults& r) {
  print_intro(s, r);
  bench::Table t({{"size"}, {"DMQ PIO"}, {"DMQ DMA"}, {"unix stream"}, {"bare ring"}, {"PIO / unix"}, {"DMA / unix"},
                  {"PIO / bare"}, {"PIO / memcpy"}, {"DMA / memcpy"}, {"wakes/msg PIO, DMA"}});
  const double mc = bench::median(r.memcpy_large_bps);
  for (uint64_t size : kStreamSizes) {
    const auto p = bw_values(r, "pio", size), d = bw_values(r, "dma", size), u = bw_values(r, "unix", size),
               b = bw_values(r, "bare", size);
    const double pm = bench::median(p), dm = bench::median(d), um = bench::median(u), bm = bench::median(b);
    t.add({bench::size_label(size), bw_cell(p), bw_cell(d), bw_cell(u), bw_cell(b), share(pm, um), share(dm, um),
           share(pm, bm), bench::fmt("%.1f %%", 100 * pm / mc), bench::fmt("%.1f %%", 100 * dm / mc),
           bench::fmt("%.2f, ", median_wakes_per_msg(r, "pio", size)) +
               bench::fmt("%.2f", median_wakes_per_msg(r, "dma", size))});
  }
  std::printf("%s", t.markdown().c_str());
}

double over_memcpy(const StreamResults& r, const char* transport) {
  return bench::median(bw_values(r, transport, kMemcpyBlock)) / bench::median(r.memcpy_large_bps);
}

bench::Verdicts verdicts(const StreamResults& r) {
  bench::Verdicts v;
  for (const char* t : {"pio", "dma"}) {
    const double x = over_memcpy(r, t);
    v.add(std::string("fabric_dmq_") + t + "_64k_over_memcpy", x,
          bench::fmt("%.0f %%", 100 * x) + pct_range(per_rep_memcpy_ratio(r, t)), bench::Scale::kPercent);
  }
  return v;
}

void print_targets(const StreamResults& r) {
  bench::Table t = verdicts(r).table();
  const double cached = bench::median(bw_values(r, "pio", kMemcpyBlock)) / bench::median(r.memcpy_bps);
  t.add({"(for scale) DMQ PIO 64 KiB / memcpy of a cache-resident 64 KiB block", bench::fmt("%.0f %%", 100 * cached),
         "-", "-"});
  std::printf("\n## Targets\n\n%s", t.markdown().c_str());
}

std::string bandwidth_csv(const StreamResults& r) {
  bench::Table t({{"transport"}, {"size_bytes"}, {"rep"}, {"messages"}, {"bytes"}, {"seconds"}, {"mb_per_s"},
                  {"wakes"}});
  for (const BwPoint& p : r.bw) {
    t.add({p.transport, p.size, p.rep, p.messages, p.bytes, bench::Value(p.seconds, "%.6f"),
           bench::Value(p.bytes_per_s() / 1e6, "%.1f"), p.wakes});
  }
  auto memcpy_rows = [&](const char* name, size_t block, const std::vector<double>& bps) {
    for (size_t i = 0; i < bps.size(); ++i) t.add({name, block, i, {}, {}, {}, bench::Value(bps[i] / 1e6, "%.1f")});
  };
  memcpy_rows("memcpy", kMemcpyBlock, r.memcpy_bps);
  memcpy_rows("memcpy_large", kMemcpyLarge, r.memcpy_large_bps);
  return t.csv();
}

std::string bandwidth_json(const StreamResults& r) {
  bench::Table t({{"transport"}, {"size"}, {"rep"}, {"messages"}, {"bytes"}, {"seconds"}, {"mb_per_s"}, {"wakes"}});
  for (const BwPoint& p : r.bw) {
    t.add({p.transport, p.size, p.rep, p.messages, p.bytes, p.seconds, p.bytes_per_s() / 1e6, p.wakes});
  }
  return t.json();
}

std::string mb_per_s_list(const std::vector<double>& bps) {
  std::string o = "[";
  for (size_t i = 0; i < bps.size(); ++i) o += (i ? ", " : "") + bench::json_num(bps[i] / 1e6);
  return o + "]";
}

}  // namespace

void print_stream_header(const bench::CommonOptions& o, const StreamSettings& s, const StreamResults& r) {
  char streams[200], dmq[200];
  std::snprintf(streams, sizeof streams,
                "sizes 16 B .. 64 KiB; per point and repetition min(%s, %.2f s) after a calibration run; %d "
                "repetition(s), transports alternated",
                bench::size_label(s.bw_bytes).c_str(), s.bw_seconds, s.reps);
  std::snprintf(dmq, sizeof dmq,
                "ring %s, max message %s, payload written by the sender per message, every byte read by the "
                "receiver (checksum verified)",
                bench::size_label(kRingBytes).c_str(), bench::size_label(kMaxMessage).c_str());
  print_header("clanorb raw fabric streaming benchmark (paper 000 sect. 3.2)", r.machine,
               {pinned_row(o, r.pinned), spin_row(o, r.spin_ns), {"streams", streams}, {"DMQ", dmq}});
}

void print_stream_tables(const StreamSettings& s, const StreamResults& r) {
  print_bandwidth(s, r);
  print_targets(r);
  std::printf("\nPaper 000 (1999 hardware, for scale only): PIO bandwidth < 400 Mbit/s (50 MB/s) on the PC "
              "I/O bus.\n");
  std::fflush(stdout);
}

bool write_stream_results(const bench::CommonOptions& o, const StreamSettings& s, const StreamResults& r) {
  const bench::Record config = {{"pinned", bench::Value::boolean(r.pinned)},
                                {"spin_budget_ns", r.spin_ns},
                                {"stream_max_bytes", s.bw_bytes},
                                {"stream_max_seconds", bench::Value(s.bw_seconds)},
                                {"repetitions", s.reps},
                                {"ring_bytes", kRingBytes},
                                {"max_message", kMaxMessage},
                                {"quick", bench::Value::boolean(o.quick)}};
  const std::string json =
      bench::json_document({{"benchmark", "fabric_stream"},
                            {"machine", bench::Value::json(bench::json_machine(r.machine))},
                            {"config", bench::Value::json(bench::json_object(config))},
                            {"bandwidth", bench::Value::json(bandwidth_json(r))},
                            {"memcpy_64k_mb_per_s", bench::Value::json(mb_per_s_list(r.memcpy_bps))},
                            {"memcpy_large_mb_per_s", bench::Value::json(mb_per_s_list(r.memcpy_large_bps))},
                            {"targets", bench::Value::json(verdicts(r).json())}});
  return bench::write_file(o.out, "fabric_bandwidth.csv", bandwidth_csv(r)) &&
         bench::write_file(o.out, "fabric_stream.json", json);
}

}  // namespace fabric_bench
