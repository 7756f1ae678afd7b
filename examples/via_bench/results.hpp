// What the VIA benchmarks measure, and the figures their tables and
// targets are computed from.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bench/activity.hpp"
#include "bench/machine.hpp"
#include "bench/stats.hpp"

namespace via_bench {

struct LatSeries {
  std::string name;  // "dmq", "via_pio", "via_dma"
  uint64_t size = 0;
  std::vector<uint64_t> rt;            // round trips, ns
  std::vector<double> round_p50;       // per alternation, round trip ns
  uint64_t sleeps = 0, exchanges = 0;  // both sides, all blocks (warm-ups included)
  int shared_cpu_blocks = 0;           // blocks that began or ended with A and B on one CPU
  double sleeps_per_rt() const;
};

struct BwPoint {
  std::string name;  // via_pio, via_dma, via_auto, dmq_pio, dmq_dma
  int rep = 0;
  uint64_t size = 0, messages = 0;
  double seconds = 0;
  bench::BlockActivity act;
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

struct Results {
  bench::MachineInfo machine;
  int64_t spin_ns = 0;
  bool pinned = false;
  double clock_ns = 0, connect_ms = 0;
  size_t connections = 0;
  std::vector<LatSeries> lat;
  std::vector<BwPoint> bw;
  std::vector<CqPoint> cq;

  // The latency series of `name` at `size`, made if new.
  LatSeries& series(const std::string& name, uint64_t size);
  const LatSeries* find_series(const std::string& name, uint64_t size) const;
  // Half round trip summary (ns); zeros if not measured.
  bench::Summary half(const std::string& name, uint64_t size) const;
  // Per-round ratio of two latency series' p50 (same round, same size): min, max.
  std::pair<double, double> round_ratio_range(const std::string& num, const std::string& den, uint64_t size) const;
  // Bandwidth (MB/s) of every repetition, and their median (0 if not measured).
  std::vector<double> bw_all(const std::string& name, uint64_t size) const;
  double bw_of(const std::string& name, uint64_t size) const { return bench::median(bw_all(name, size)); }
  double bw_sleeps(const std::string& name, uint64_t size) const;
  // Messages/s through the CQ of every repetition, and their median.
  std::vector<double> cq_all(const std::string& name, int conns) const;
  double cq_of(const std::string& name, int conns) const { return bench::median(cq_all(name, conns)); }
};

}  // namespace via_bench
