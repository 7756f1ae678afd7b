#include "fabric_bench/header.hpp"

#include <cinttypes>
#include <cstdio>

#include "bench/session.hpp"

namespace fabric_bench {

void print_header(const char* title, const bench::MachineInfo& m, const HeaderRows& rows) {
  std::printf("# %s\n\n", title);
  std::printf("| | |\n|---|---|\n");
  std::printf("| date | %s |\n", m.date_utc.c_str());
  std::printf("| CPU | %s |\n", m.cpu_model.c_str());
  std::printf("| cores | %ld online, %d allowed |\n", m.cores_online, m.cores_allowed);
  std::printf("| kernel | %s |\n", m.kernel.c_str());
  for (const auto& [name, value] : rows) std::printf("| %s | %s |\n", name.c_str(), value.c_str());
  std::printf("| compiler | %s |\n\n", m.compiler.c_str());
  std::fflush(stdout);
}

std::pair<std::string, std::string> pinned_row(const bench::CommonOptions& o, bool pinned) {
  return {"pinned", pinned ? "yes (A on 1st allowed CPU, B on 2nd; DMA engine unpinned)"
                           : (o.pin ? "requested but not possible" : "no")};
}

std::pair<std::string, std::string> spin_row(const bench::CommonOptions& o, int64_t spin_ns) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%" PRId64 " ns (Tripwire::wait spins this long, then sleeps)%s", spin_ns,
                bench::spin_budget_source(o.spin_ns));
  return {"spin budget", buf};
}

}  // namespace fabric_bench
