// The machine header every benchmark prints and writes: date, CPU, cores,
// kernel, clock source, compiler; and the cost of one timestamp.
#pragma once

#include <string>

namespace bench {

struct MachineInfo {
  std::string date_utc;     // ISO 8601
  std::string cpu_model;    // /proc/cpuinfo "model name"
  long cores_online = 0;    // sysconf(_SC_NPROCESSORS_ONLN)
  int cores_allowed = 0;    // sched_getaffinity of this process
  std::string kernel;       // uname -srm
  std::string clocksource;  // /sys/devices/system/clocksource/clocksource0
  std::string compiler = __VERSION__;
};

std::string read_first_line(const char* path);

MachineInfo machine_info();

// Median cost of one steady_clock::now() call, in ns (timestamps bracket
// every sample, so this is part of every measured round trip).
double clock_overhead_ns();

}  // namespace bench
