// Helpers of the benchmark client and server programs that need no CORBA:
// command-line parsing, latency summaries (exact nearest-rank percentiles of
// the raw samples) and their one-line JSON, raw sample files. Header-only;
// orb_common.hpp adds the ORB parts.
#pragma once

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace orbx {

using Clock = std::chrono::steady_clock;

// A usage error: printed with the program's usage text, exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------
// Command line (for ORB programs: what ORB_init left)

class Args {
 public:
  Args(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) rest_.emplace_back(argv[i]);
  }
  // Removes `--name VALUE` (or `--name=VALUE`) and returns VALUE, or `def`.
  std::string take(const std::string& name, const std::string& def) {
    for (size_t i = 0; i < rest_.size(); ++i) {
      if (rest_[i] == name) {
        if (i + 1 >= rest_.size()) throw UsageError(name + " needs a value");
        std::string v = rest_[i + 1];
        rest_.erase(rest_.begin() + static_cast<std::ptrdiff_t>(i), rest_.begin() + static_cast<std::ptrdiff_t>(i) + 2);
        return v;
      }
      if (rest_[i].rfind(name + "=", 0) == 0) {
        std::string v = rest_[i].substr(name.size() + 1);
        rest_.erase(rest_.begin() + static_cast<std::ptrdiff_t>(i));
        return v;
      }
    }
    return def;
  }
  uint64_t take_u64(const std::string& name, uint64_t def) {
    std::string v = take(name, "");
    if (v.empty()) return def;
    return parse_u64(name, v);
  }
  double take_double(const std::string& name, double def) {
    std::string v = take(name, "");
    if (v.empty()) return def;
    char* end = nullptr;
    double d = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || *end != '\0' || !(d >= 0)) throw UsageError(name + ": not a non-negative number: " + v);
    return d;
  }
  bool take_flag(const std::string& name) {
    auto it = std::find(rest_.begin(), rest_.end(), name);
    if (it == rest_.end()) return false;
    rest_.erase(it);
    return true;
  }
  // Removes and returns the next positional argument.
  std::string positional(const std::string& what) {
    for (size_t i = 0; i < rest_.size(); ++i) {
      if (rest_[i].rfind("--", 0) != 0) {
        std::string v = rest_[i];
        rest_.erase(rest_.begin() + static_cast<std::ptrdiff_t>(i));
        return v;
      }
    }
    throw UsageError("missing " + what);
  }
  // Everything must have been consumed.
  void finish() const {
    if (!rest_.empty()) throw UsageError("unknown argument: " + rest_.front());
  }

  static uint64_t parse_u64(const std::string& name, const std::string& v) {
    // Accepts plain numbers and K/M/G (binary) suffixes: 64K, 10M.
    char* end = nullptr;
    errno = 0;
    unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    if (end == v.c_str() || errno != 0 || v[0] == '-') throw UsageError(name + ": not a number: " + v);
    uint64_t mult = 1;
    std::string_view suffix(end);
    if (suffix == "K" || suffix == "k" || suffix == "KiB") mult = 1024;
    else if (suffix == "M" || suffix == "MiB") mult = 1024 * 1024;
    else if (suffix == "G" || suffix == "GiB") mult = 1024ull * 1024 * 1024;
    else if (!suffix.empty()) throw UsageError(name + ": bad suffix: " + v);
    return static_cast<uint64_t>(n) * mult;
  }

 private:
  std::vector<std::string> rest_;
};

// ---------------------------------------------------------------------------
// Latency summaries (exact nearest-rank percentiles of the raw samples).

inline double percentile_sorted(const std::vector<uint64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return static_cast<double>(sorted[rank - 1]);
}

// {count,p50_us,p90_us,p99_us,max_us,mean_us} from samples in nanoseconds.
inline std::string latency_json(std::vector<uint64_t> ns, const std::string& extra = "") {
  std::sort(ns.begin(), ns.end());
  long double sum = 0;
  for (uint64_t v : ns) sum += static_cast<long double>(v);
  double mean = ns.empty() ? 0 : static_cast<double>(sum / static_cast<long double>(ns.size()));
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"count\":%zu,\"p50_us\":%.3f,\"p90_us\":%.3f,\"p99_us\":%.3f,\"max_us\":%.3f,\"mean_us\":%.3f%s}",
                ns.size(), percentile_sorted(ns, 0.5) / 1e3, percentile_sorted(ns, 0.9) / 1e3,
                percentile_sorted(ns, 0.99) / 1e3, ns.empty() ? 0.0 : static_cast<double>(ns.back()) / 1e3,
                mean / 1e3, extra.c_str());
  return buf;
}

// One sample per line, in microseconds, in call order.
inline void write_samples(const std::string& path, const std::vector<uint64_t>& ns) {
  if (path.empty()) return;
  std::ofstream f(path);
  char buf[32];
  for (uint64_t v : ns) {
    std::snprintf(buf, sizeof buf, "%.3f\n", static_cast<double>(v) / 1e3);
    f << buf;
  }
  if (!f) throw std::runtime_error("cannot write samples to " + path);
}

inline uint64_t elapsed_ns(Clock::time_point a, Clock::time_point b) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}

}  // namespace orbx
