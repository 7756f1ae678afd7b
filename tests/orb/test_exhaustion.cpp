// A server out of room, or a client over its cap, refuses connections at
// once and says so at omniORB's default trace level: which resource ran out
// and its limit, or the cap, with the option that sets it.
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "orb/orb_fixture.hpp"

using namespace clan::orbtest;
using Catch::Matchers::Contains;

namespace {

// An endpoint on a node named here, so that churn_client can be given it.
std::string endpoint(const std::string& scheme) {
  static int n = 0;
  return scheme + ":exhaust-" + std::to_string(getpid()) + "-" + std::to_string(++n) + ":7";
}

}  // namespace

TEST_CASE("a server out of NIC room logs the refusal at the default trace level, naming the "
          "resource and its limit",
          "[orb][exhaustion]") {
  const std::string scheme = GENERATE(as<std::string>{}, "giop:clan", "giop:otp");
  INFO(scheme);
  // Room for two connections: two endpoints (frames are virtualised, the
  // endpoints' host memory is not).
  Server server(Transport{scheme, {endpoint(scheme)}}, Threading::kPerConnection,
                {"-ORBclanMaxConnections", "2"}, /*merge_stderr=*/true);
  std::vector<std::unique_ptr<Process>> holders;
  for (int i = 0; i < 2; ++i) {
    holders.push_back(start_client({"--ior", server.echo_ior(), "--stall"}));
    REQUIRE(server.wait_stalled());
  }
  auto refused = start_client({"--ior", server.echo_ior(), "--calls", "1", "--expect", "TRANSIENT"});
  CHECK(refused->wait() == kClientOk);
  const auto line = server.wait_for_log("refused a connection from");
  REQUIRE(line);
  CHECK_THAT(*line, Contains(scheme + ": " + scheme + ":exhaust-"));
  CHECK_THAT(*line, Contains("refused a connection from orb" + std::to_string(refused->pid()) + ": "));
  CHECK_THAT(*line, Contains("no endpoint left (2 in use, limit 2)"));
  CHECK_THAT(*line, Contains("-ORBclanMaxConnections raises the NIC's limits"));
  for (size_t i = 0; i < holders.size(); ++i) REQUIRE(server.release_one());
  for (auto& h : holders) CHECK(h->wait() == kClientOk);
  CHECK(server.stop() == 0);
}

TEST_CASE("a client over -ORBclanMaxConnectionsPerClient is refused at once, logged, while another "
          "client connects",
          "[orb][exhaustion]") {
  const std::string scheme = GENERATE(as<std::string>{}, "giop:clan", "giop:otp", "giop:via");
  INFO(scheme);
  const std::string address = endpoint(scheme);
  Server server(Transport{scheme, {address}}, Threading::kPerConnection,
                {"-ORBclanMaxConnectionsPerClient", "2"}, /*merge_stderr=*/true);
  // One client (one node) asks for three connections and keeps what it gets.
  Process holder(CHURN_CLIENT, {"--address", address, "--ior", server.echo_ior(), "--hold", "3"});
  const auto counts = holder.read_line(std::chrono::seconds(60));
  REQUIRE(counts);
  CHECK(*counts == "connected 2 refused 1");
  const auto line = server.wait_for_log("refused a connection from");
  REQUIRE(line);
  CHECK_THAT(*line, Contains("hold" + std::to_string(holder.pid())));
  CHECK_THAT(*line, Contains("it has 2 connections to this endpoint, the most one client may have "
                             "(-ORBclanMaxConnectionsPerClient 2)"));
  // Another client is served while the first holds its two.
  Process other(CHURN_CLIENT, {"--address", address, "--ior", server.echo_ior(), "--clients", "1"},
                /*merge_stderr=*/true);
  const Finished f = collect(other);
  INFO(f.output);
  CHECK(f.code == 0);
  holder.close_stdin();
  CHECK(holder.wait() == 0);
  CHECK(server.stop() == 0);
}
