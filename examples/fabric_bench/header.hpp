// The machine header both fabric benchmarks print first.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "bench/machine.hpp"
#include "bench/options.hpp"

namespace fabric_bench {

using HeaderRows = std::vector<std::pair<std::string, std::string>>;

// "# title", then date, CPU, cores and kernel, `rows`, and the compiler.
void print_header(const char* title, const bench::MachineInfo& m, const HeaderRows& rows);

// The "pinned" and "spin budget" rows.
std::pair<std::string, std::string> pinned_row(const bench::CommonOptions& o, bool pinned);
std::pair<std::string, std::string> spin_row(const bench::CommonOptions& o, int64_t spin_ns);

}  // namespace fabric_bench
