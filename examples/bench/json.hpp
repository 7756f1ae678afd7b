// JSON text of the benchmarks' results: strings, numbers, and the summary
// and machine objects every result file carries.
#pragma once

#include <string>

#include "bench/machine.hpp"
#include "bench/stats.hpp"

namespace bench {

std::string json_escape(const std::string& s);
std::string json_str(const std::string& s);
// "%.6g", or null when not finite.
std::string json_num(double v);
// One entry of a benchmark's "targets" list; `measured` is already JSON.
std::string json_target(const std::string& figure, const std::string& measured, const std::string& target,
                        bool met);
std::string json_summary(const Summary& s);
std::string json_machine(const MachineInfo& m);

}  // namespace bench
