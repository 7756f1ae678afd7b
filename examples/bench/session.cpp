#include "bench/session.hpp"

#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "bench/peer.hpp"

namespace bench {
namespace {

const char* g_program = "bench";
pid_t g_peer = -1;
std::string g_runtime_dir;

}  // namespace

void set_program_name(const char* name) { g_program = name; }
const char* program_name() { return g_program; }

void register_peer(pid_t pid) { g_peer = pid; }

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "%s: error: %s\n", g_program, what.c_str());
  if (g_peer > 0) {
    kill(g_peer, SIGKILL);
    const int code = reap_peer(g_peer, std::chrono::milliseconds(2000));
    std::fprintf(stderr, "%s: peer exit status %d\n", g_program, code);
  }
  remove_runtime_dir();
  std::exit(1);
}

std::string make_runtime_dir(const char* prefix) {
  std::string tmpl = std::string("/tmp/") + prefix + "-XXXXXX";
  if (!mkdtemp(tmpl.data())) die("mkdtemp failed");
  g_runtime_dir = tmpl;
  setenv("CLAN_RUNTIME_DIR", tmpl.c_str(), 1);
  return tmpl;
}

void remove_runtime_dir() {
  if (g_runtime_dir.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(g_runtime_dir, ec);
  g_runtime_dir.clear();
}

void apply_spin_budget(int64_t spin_ns) {
  if (spin_ns >= 0) setenv("CLAN_SPIN_NS", std::to_string(spin_ns).c_str(), 1);
}

clan::NicConfig nic_config(const std::string& name, int64_t spin_ns) {
  clan::NicConfig c;
  c.name = name;
  if (spin_ns >= 0) c.spin_budget = std::chrono::nanoseconds(spin_ns);
  return c;
}

const char* spin_budget_source(int64_t spin_ns) {
  if (spin_ns >= 0) return " (--spin-ns)";
  return std::getenv("CLAN_SPIN_NS") ? " (CLAN_SPIN_NS)" : " (clan_emul default)";
}

}  // namespace bench
