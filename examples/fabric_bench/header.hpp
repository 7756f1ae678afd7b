// The machine header both fabric benchmarks print first, and the NIC-side
// set-up their measuring processes share.
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

// With --pin, pins this process to the n-th allowed CPU (the measuring side
// 0, the peer 1). True if pinned and a second CPU exists for the peer.
bool pin_side(const bench::CommonOptions& o, int n);

}  // namespace fabric_bench
