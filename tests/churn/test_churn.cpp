// A server keeps nothing per client once the client has gone: its resident
// memory after 20,000 short-lived clients is within a small bound of what it
// was after 1,000. Each client is a distinct peer (a NIC and an OOB node of
// its own) making one real call (churn_client.cpp). The first 1,000 fill
// what is allocated once or grows to a steady size (thread stacks, pools,
// peers in their grace period); only what is kept per client grows after.
#include <fstream>
#include <string>

#include <unistd.h>

#include "orb/orb_fixture.hpp"

using namespace clan::orbtest;

namespace {

constexpr unsigned long kWarmClients = 1000;
constexpr unsigned long kMoreClients = 19000;
// Growth allowed between the two readings. Per client kept, 19,000 clients
// grow the server by 19 KiB per byte: 100 bytes a client is 1.8 MiB.
constexpr long kBoundKiB = 1024;

long rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

void run_clients(const std::string& address, const Server& server, unsigned long first,
                 unsigned long count) {
  Process p(CHURN_CLIENT, {"--address", address, "--ior", server.echo_ior(), "--clients",
                           std::to_string(count), "--first", std::to_string(first)},
            /*merge_stderr=*/true);
  const Finished f = collect(p, std::chrono::minutes(5));
  INFO(f.output);
  REQUIRE(f.code == 0);
}

void check_churn(const std::string& scheme) {
  // Node names of their own: the clients need the server's address.
  const std::string address = scheme + ":churn-server-" + std::to_string(getpid()) + ":7";
  Server server(Transport{scheme, {address}}, Threading::kPerConnection);
  run_clients(address, server, 0, kWarmClients);
  const long warm = rss_kib(server.pid());
  run_clients(address, server, kWarmClients, kMoreClients);
  const long after = rss_kib(server.pid());
  INFO(scheme << ": server RSS " << warm << " KiB after " << kWarmClients << " clients, " << after
              << " KiB after " << kWarmClients + kMoreClients);
  REQUIRE(warm > 0);
  CHECK(after - warm <= kBoundKiB);
  CHECK(server.stop() == 0);
}

}  // namespace

TEST_CASE("a giop:clan server's memory after 20,000 clients is within a bound of after 1,000",
          "[orb][churn]") {
  check_churn("giop:clan");
}

TEST_CASE("a giop:otp server's memory after 20,000 clients is within a bound of after 1,000",
          "[orb][churn]") {
  check_churn("giop:otp");
}

TEST_CASE("a giop:via server's memory after 20,000 clients is within a bound of after 1,000",
          "[orb][churn]") {
  check_churn("giop:via");
}
