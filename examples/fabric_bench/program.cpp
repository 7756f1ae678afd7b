#include "fabric_bench/program.hpp"

#include <signal.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/peer.hpp"
#include "bench/pinning.hpp"
#include "bench/session.hpp"
#include "bench/targets.hpp"

namespace fabric_bench {

bench::MachineInfo start_program(const char* name, const std::vector<std::string>& targets, int64_t spin_ns) {
  bench::set_program_name(name);
  bench::require_targets(targets);
  signal(SIGPIPE, SIG_IGN);
  bench::apply_spin_budget(spin_ns);
  return bench::machine_info();
}

void* map_shared(size_t bytes, const char* what) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) bench::die(std::string("mmap of ") + what + " failed");
  return p;
}

bool pin_side(const bench::CommonOptions& o, int n) {
  if (!o.pin) return false;
  const int cpu = bench::nth_allowed_cpu(n);
  if (n == 0) return cpu >= 0 && bench::nth_allowed_cpu(1) >= 0 && bench::pin_to_cpu(cpu);
  return cpu >= 0 && bench::pin_to_cpu(cpu);
}

void Side::open_nic(int64_t spin_ns) {
  auto nic = clan::Nic::open(bench::nic_config("fabric-a", spin_ns));
  if (!nic) bench::die(std::string("Nic::open: ") + clan::to_string(nic.error()));
  nic_ = std::move(nic.value());
}

void print_usage(const char* argv0, const char* options) {
  std::fprintf(stderr, "usage: %s %s\n", argv0, options);
  std::exit(2);
}

long long option_number(int argc, char** argv, int& i, void (*usage)(const char* argv0), long long min) {
  if (i + 1 >= argc) usage(argv[0]);
  char* end = nullptr;
  const long long v = std::strtoll(argv[++i], &end, 10);
  if (!end || *end || v < min) usage(argv[0]);
  return v;
}

bool PeerSide::open_nic(int64_t spin_ns) {
  auto nic = clan::Nic::open(bench::nic_config("fabric-b", spin_ns));
  if (!nic) return false;
  nic_ = std::move(nic.value());
  return true;
}

int end_program(bench::ProcessPair& pair, const std::function<void()>& quit, const bench::CommonOptions& o,
                const Ending& e) {
  bench::arm_watchdog(30);
  quit();
  const int code = pair.finish();
  e.print();
  if (!o.out.empty()) {
    if (!e.write()) return 1;
    std::fprintf(stderr, "%s: results in %s/%s\n", bench::program_name(), o.out.c_str(), e.files);
  }
  return code == 0 ? 0 : 1;
}

}  // namespace fabric_bench
