// A server keeps nothing of clients that have gone: connections made and
// dropped one after another leave no file descriptors or memory mappings
// behind (shared memory of departed peers included).
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <csignal>
#include <unistd.h>

#include "orb/generate.hpp"
#include "orb/orb_fixture.hpp"

using namespace clan::orbtest;
using namespace std::chrono_literals;

namespace {

// Slack for connections still being torn down; a leak of even one
// descriptor per connection exceeds it.
constexpr size_t kSlack = 8;

struct Footprint {
  size_t fds = 0, maps = 0;  // open descriptors, shared memory mappings
};

Footprint footprint(pid_t pid) {
  Footprint f;
  const std::string proc = "/proc/" + std::to_string(pid);
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(proc + "/fd")) ++f.fds;
  // Shared mappings only (peers' memory): private ones come and go with the
  // ORB's threads (stacks), which omniORB keeps idle for a while.
  std::ifstream maps(proc + "/maps");
  for (std::string line; std::getline(maps, line);) {
    const auto perms = line.find(' ');
    if (perms != std::string::npos && perms + 4 < line.size() && line[perms + 4] == 's') ++f.maps;
  }
  return f;
}

void run_clients(const Server& server, int n) {
  for (int i = 0; i < n; ++i) {
    auto c = start_client({"--ior", server.echo_ior(), "--calls", "1", "--tag", "fp"});
    REQUIRE(c->wait() == kClientOk);
  }
}

}  // namespace

TEST_CASE("clients that come and go leave no descriptors or mappings behind in the server", "[orb]") {
  ORB_TEST_OVER_EVERY_TRANSPORT();
  Server server(t, mode);
  // Warm-up: thread pools, lazily opened resources and bounded caches fill.
  run_clients(server, 20);
  const Footprint before = footprint(server.pid());
  constexpr int kClients = 30;
  run_clients(server, kClients);
  // The connection manager forgets a departed peer's node (a ZeroMQ socket)
  // after an idle grace of a few seconds: poll until the footprint is back,
  // for a bounded time.
  auto leaked = [&](const Footprint& f) {
    return f.fds > before.fds + kSlack || f.maps > before.maps + kSlack;
  };
  Footprint after = footprint(server.pid());
  for (auto limit = std::chrono::steady_clock::now() + 20s;
       leaked(after) && std::chrono::steady_clock::now() < limit;) {
    std::this_thread::sleep_for(50ms);  // poll interval
    after = footprint(server.pid());
  }
  INFO("fds " << before.fds << " -> " << after.fds << ", mappings " << before.maps << " -> "
              << after.maps << " after " << kClients << " more clients");
  CHECK(after.fds <= before.fds + kSlack);
  CHECK(after.maps <= before.maps + kSlack);
  CHECK(server.stop() == 0);
}

// A client whose connects keep failing (its server is gone) keeps nothing of
// the attempts: giop:via once left each attempt's VI and its registered
// receive buffers behind, as VIPL cannot destroy a VI with receives posted.
TEST_CASE("a client whose connects fail keeps no descriptors or mappings of the attempts", "[orb]") {
  ORB_TEST_OVER_EVERY_TRANSPORT();
  Server server(t, mode);
  echo_var e = server.echo();
  REQUIRE(!CORBA::is_nil(e));
  {
    CORBA::String_var r = e->echoString("before");
    REQUIRE(std::string(r.in()) == "before");
  }
  server.kill_now();
  REQUIRE(server.wait() == 128 + SIGKILL);
  auto failed_call = [&] {
    const std::string ex = system_exception_of([&] { CORBA::String_var r = e->echoString("gone"); });
    INFO("exception: " << (ex.empty() ? "none" : ex));
    REQUIRE((ex == "TRANSIENT" || ex == "COMM_FAILURE"));
  };
  // The first failure tears down the old connection; later calls only connect.
  for (int i = 0; i < 3; ++i) failed_call();
  const Footprint before = footprint(getpid());
  constexpr int kAttempts = 30;
  for (int i = 0; i < kAttempts; ++i) failed_call();
  const Footprint after = footprint(getpid());
  INFO("fds " << before.fds << " -> " << after.fds << ", mappings " << before.maps << " -> " << after.maps
              << " after " << kAttempts << " failed connects");
  CHECK(after.fds <= before.fds + kSlack);
  CHECK(after.maps <= before.maps + kSlack);
}
