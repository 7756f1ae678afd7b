// Shared helpers of the clanorb benchmarks: latency summaries (exact
// percentiles from the raw samples), a fine log-linear histogram for the CSV
// files and plots, the machine header every benchmark prints, and small
// formatting helpers for Markdown tables and JSON. Header-only, no CORBA, no
// clan_emul: later benchmarks (echo, ttcp, VIA) reuse it.
#pragma once

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace bench {

// ---------------------------------------------------------------------------
// Latency summaries

struct Summary {
  size_t count = 0;
  double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;  // nanoseconds
};

// Nearest-rank percentile of sorted samples (q in [0, 1]).
inline double percentile_sorted(const std::vector<uint64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  if (rank == 0) rank = 1;
  if (rank > sorted.size()) rank = sorted.size();
  return static_cast<double>(sorted[rank - 1]);
}

inline Summary summarize(std::vector<uint64_t> samples) {
  Summary s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  long double sum = 0;
  for (uint64_t v : samples) sum += static_cast<long double>(v);
  s.min = static_cast<double>(samples.front());
  s.max = static_cast<double>(samples.back());
  s.mean = static_cast<double>(sum / static_cast<long double>(samples.size()));
  s.p50 = percentile_sorted(samples, 0.50);
  s.p90 = percentile_sorted(samples, 0.90);
  s.p99 = percentile_sorted(samples, 0.99);
  return s;
}

// Fraction of samples at or below `limit_ns`.
inline double fraction_below(const std::vector<uint64_t>& samples, uint64_t limit_ns) {
  if (samples.empty()) return 0;
  size_t n = 0;
  for (uint64_t v : samples) n += v <= limit_ns;
  return static_cast<double>(n) / static_cast<double>(samples.size());
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
inline double min_of(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
}
inline double max_of(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

// ---------------------------------------------------------------------------
// Log-linear histogram (HDR style): exact below 64 ns, then 64 bins per
// power of two (about 1.6 % relative resolution). Enough to draw a CDF of
// round trips without storing every sample.

class LogHistogram {
 public:
  static constexpr unsigned kSubBits = 6;  // 64 sub-bins per octave

  void add(uint64_t v) { ++bins_[bin_lo(v)]; }
  void add_all(const std::vector<uint64_t>& v) {
    for (uint64_t x : v) add(x);
  }
  // Lower bound (inclusive) of the bin holding v.
  static uint64_t bin_lo(uint64_t v) {
    if (v < (uint64_t{1} << kSubBits)) return v;
    unsigned msb = 63 - static_cast<unsigned>(__builtin_clzll(v));
    unsigned shift = msb - kSubBits;
    return (v >> shift) << shift;
  }
  // Upper bound (exclusive) of the bin starting at lo.
  static uint64_t bin_hi(uint64_t lo) {
    if (lo < (uint64_t{1} << kSubBits)) return lo + 1;
    unsigned msb = 63 - static_cast<unsigned>(__builtin_clzll(lo));
    return lo + (uint64_t{1} << (msb - kSubBits));
  }
  const std::map<uint64_t, uint64_t>& bins() const { return bins_; }

 private:
  std::map<uint64_t, uint64_t> bins_;
};

// ---------------------------------------------------------------------------
// The machine header

struct MachineInfo {
  std::string date_utc;    // ISO 8601
  std::string cpu_model;   // /proc/cpuinfo "model name"
  long cores_online = 0;   // sysconf(_SC_NPROCESSORS_ONLN)
  int cores_allowed = 0;   // sched_getaffinity of this process
  std::string kernel;      // uname -srm
  std::string clocksource; // /sys/devices/system/clocksource/clocksource0
  std::string compiler = __VERSION__;
};

inline std::string read_first_line(const char* path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

inline MachineInfo machine_info() {
  MachineInfo m;
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  m.date_utc = buf;
  std::ifstream cpu("/proc/cpuinfo");
  for (std::string line; std::getline(cpu, line);) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) m.cpu_model = line.substr(colon + 2);
      break;
    }
  }
  if (m.cpu_model.empty()) m.cpu_model = "unknown";
  m.cores_online = sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) m.cores_allowed = CPU_COUNT(&set);
  utsname u{};
  if (uname(&u) == 0) m.kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;
  m.clocksource = read_first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  if (m.clocksource.empty()) m.clocksource = "unknown";
  return m;
}

// Median cost of one steady_clock::now() call, in ns (timestamps bracket
// every sample, so this is part of every measured round trip).
inline double clock_overhead_ns() {
  using C = std::chrono::steady_clock;
  std::vector<double> v;
  for (int rep = 0; rep < 11; ++rep) {
    constexpr int kN = 10000;
    auto t0 = C::now();
    for (int i = 0; i < kN - 1; ++i) (void)C::now();
    auto t1 = C::now();
    v.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / kN);
  }
  return median(v);
}

// ---------------------------------------------------------------------------
// Formatting

inline std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
// Nanoseconds shown as microseconds with 3 decimals.
inline std::string us(double ns) { return fmt("%.3f", ns / 1000.0); }
inline std::string ratio(double r) { return fmt(r >= 100 ? "%.0fx" : r >= 10 ? "%.1fx" : "%.2fx", r); }
inline std::string mbs(double bytes_per_s) { return fmt("%.0f", bytes_per_s / 1e6); }
inline const char* met(bool ok) { return ok ? "MET" : "NOT MET"; }

inline std::string size_label(uint64_t bytes) {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

inline std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      o += fmt("\\u%04x", static_cast<unsigned char>(c));
    } else {
      o += c;
    }
  }
  return o;
}
inline std::string json_str(const std::string& s) { return "\"" + json_escape(s) + "\""; }
inline std::string json_num(double v) {
  if (!std::isfinite(v)) return "null";
  return fmt("%.6g", v);
}
// One entry of a benchmark's "targets" list; `measured` is already JSON.
inline std::string json_target(const std::string& figure, const std::string& measured,
                               const std::string& target, bool met) {
  return "{\"figure\": " + json_str(figure) + ", \"measured\": " + measured +
         ", \"target\": " + json_str(target) + ", \"met\": " + (met ? "true" : "false") + "}";
}

inline std::string json_summary(const Summary& s) {
  std::ostringstream o;
  o << "{\"count\": " << s.count << ", \"min_ns\": " << json_num(s.min)
    << ", \"p50_ns\": " << json_num(s.p50) << ", \"p90_ns\": " << json_num(s.p90)
    << ", \"p99_ns\": " << json_num(s.p99) << ", \"max_ns\": " << json_num(s.max)
    << ", \"mean_ns\": " << json_num(s.mean) << "}";
  return o.str();
}
inline std::string json_machine(const MachineInfo& m) {
  std::ostringstream o;
  o << "{\"date_utc\": " << json_str(m.date_utc) << ", \"cpu_model\": " << json_str(m.cpu_model)
    << ", \"cores_online\": " << m.cores_online << ", \"cores_allowed\": " << m.cores_allowed
    << ", \"kernel\": " << json_str(m.kernel) << ", \"clocksource\": " << json_str(m.clocksource)
    << ", \"compiler\": " << json_str(m.compiler) << "}";
  return o.str();
}

}  // namespace bench
