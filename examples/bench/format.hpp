// How the benchmarks print figures in their Markdown tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bench {

std::string fmt(const char* f, double v);
// Nanoseconds shown as microseconds with 3 decimals.
std::string us(double ns);
std::string ratio(double r);
std::string mbs(double bytes_per_s);
const char* met(bool ok);
// "64 KiB", "1 MiB", "40 B".
std::string size_label(uint64_t bytes);
// " (min-max)" of repetitions in printf format `f`; empty for fewer than two.
std::string range_of(const std::vector<double>& v, const char* f);

}  // namespace bench
