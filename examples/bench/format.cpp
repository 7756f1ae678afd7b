#include "bench/format.hpp"

#include <cstdio>

#include "bench/stats.hpp"

namespace bench {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string us(double ns) { return fmt("%.3f", ns / 1000.0); }

std::string ratio(double r) { return fmt(r >= 100 ? "%.0fx" : r >= 10 ? "%.1fx" : "%.2fx", r); }

std::string mbs(double bytes_per_s) { return fmt("%.0f", bytes_per_s / 1e6); }

const char* met(bool ok) { return ok ? "MET" : "NOT MET"; }

std::string size_label(uint64_t bytes) {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

std::string range_of(const std::vector<double>& v, const char* f) {
  if (v.size() < 2) return "";
  return " (" + fmt(f, min_of(v)) + "-" + fmt(f, max_of(v)) + ")";
}

}  // namespace bench
