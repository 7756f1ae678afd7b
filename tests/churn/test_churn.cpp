// A server keeps nothing per client once the client has gone: its resident
// memory after 20,000 short-lived clients is within a small bound of what it
// was after 1,000. Each client is a distinct peer (a NIC and an OOB node of
// its own) making one real call (churn_client.cpp). The first 1,000 fill
// what is allocated once or grows to a steady size (thread stacks, pools,
// peers in their grace period); only what is kept per client grows after.
// Both what the system sees and what the server retains once its allocator
// has returned its free pages (malloc_trim) are checked: the second tells a
// kept object from free memory the allocator holds on to.
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "orb/orb_fixture.hpp"

using namespace clan::orbtest;

namespace {

constexpr unsigned long kWarmClients = 1000;
constexpr unsigned long kMoreClients = 19000;
// Growth allowed between the two readings. Per client kept, 19,000 clients
// grow the server by 19 KiB per byte: 110 bytes a client exceed it. A
// server that keeps nothing stays well within it (allocator noise).
constexpr long kBoundKiB = 2048;

long rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// Clients first .. first + count - 1, made by kMakers churn_client processes
// at once: each client spends most of its life waiting for the other side,
// so several makers finish sooner, also on two cores.
constexpr unsigned long kMakers = 4;

void run_clients(const std::string& address, const Server& server, unsigned long first,
                 unsigned long count) {
  std::vector<std::unique_ptr<Process>> makers;
  for (unsigned long m = 0; m < kMakers; ++m) {
    const unsigned long from = first + count * m / kMakers, to = first + count * (m + 1) / kMakers;
    makers.push_back(std::make_unique<Process>(
        CHURN_CLIENT,
        std::vector<std::string>{"--address", address, "--ior", server.echo_ior(), "--clients",
                                 std::to_string(to - from), "--first", std::to_string(from)},
        /*merge_stderr=*/true));
  }
  for (auto& p : makers) {
    const Finished f = collect(*p, std::chrono::minutes(5));
    INFO(f.output);
    REQUIRE(f.code == 0);
  }
}

// The server's memory now: as it stands (what the system sees), then what is
// left once its allocator has returned its free pages (what the server
// retains), and the allocator's figures between the two.
struct Reading {
  long rss_kib = -1, retained_kib = -1;
  std::string heap;
};

Reading read_memory(Server& server) {
  Reading r;
  r.rss_kib = rss_kib(server.pid());
  r.heap = server.heap_report();
  if (server.trim_heap()) r.retained_kib = rss_kib(server.pid());
  return r;
}

void check_churn(const std::string& scheme) {
  // Node names of their own: the clients need the server's address.
  const std::string address = scheme + ":churn-server-" + std::to_string(getpid()) + ":7";
  Server server(Transport{scheme, {address}}, Threading::kPerConnection);
  run_clients(address, server, 0, kWarmClients);
  const Reading warm = read_memory(server);
  run_clients(address, server, kWarmClients, kMoreClients);
  const Reading after = read_memory(server);
  INFO(scheme << ": server RSS " << warm.rss_kib << " KiB after " << kWarmClients << " clients, "
              << after.rss_kib << " KiB after " << kWarmClients + kMoreClients << "; retained "
              << warm.retained_kib << " and " << after.retained_kib << " KiB; allocator: " << warm.heap
              << ", then " << after.heap);
  REQUIRE(warm.rss_kib > 0);
  REQUIRE(warm.retained_kib > 0);
  REQUIRE(after.retained_kib > 0);
  // Kept per client: shows in what the server retains, whatever its
  // allocator's free pages do.
  CHECK(after.retained_kib - warm.retained_kib <= kBoundKiB);
  // Nor may free memory the allocator keeps creep with the clients served
  // (clan_emul's OOB thread returns it as peers are forgotten).
  CHECK(after.rss_kib - warm.rss_kib <= kBoundKiB);
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
