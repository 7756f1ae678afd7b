#include "bench/machine.hpp"

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <vector>

#include "bench/stats.hpp"

namespace bench {
namespace {

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string cpu_model() {
  std::ifstream cpu("/proc/cpuinfo");
  for (std::string line; std::getline(cpu, line);) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
      break;
    }
  }
  return "unknown";
}

}  // namespace

std::string read_first_line(const char* path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

MachineInfo machine_info() {
  MachineInfo m;
  m.date_utc = utc_now();
  m.cpu_model = cpu_model();
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

double clock_overhead_ns() {
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

}  // namespace bench
