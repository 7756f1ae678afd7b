// giop:via to a server of another host, on one machine: the client takes the
// server for another host's because the IOR's components carry a forged boot
// id. A server with -ORBclanHost publishes its via node's tcp address in its
// via component; a client with its own -ORBclanHost connects to
// "giop:via:NODE@HOST:PORT:PORT" through VIPL, over that node's tcp listener.
// Without either address the client says why not, at trace level 10.
// (tests/hosts/ runs giop:via between two network namespaces.)
#include <string>
#include <vector>

#include "orb/orb_fixture.hpp"
#include "tools/ior_forgery.hpp"

using namespace clan::orbtest;

namespace {

const Transport kViaOnly{"via", {"giop:via::"}};
const Transport kTcpAndVia{"tcp+via", {"giop:tcp:127.0.0.1:", "giop:via::"}};
const std::vector<std::string> kThisHost{"-ORBclanHost", "127.0.0.1"};

// The echo reference of `server` as a client of another host sees it.
std::string from_another_host(const Server& server) {
  return clanorb::test::with_boot_id(server.echo_ior(), clanorb::test::another_boot_id());
}

// orb_test_peer client making `calls` calls at trace level 10, its stderr
// read with its stdout, with `extra` arguments.
std::unique_ptr<Process> start_traced_client(const std::string& ior, const std::string& calls,
                                             const std::vector<std::string>& extra) {
  std::vector<std::string> args{"client", "--ior", ior, "--calls", calls, "-ORBtraceLevel", "10"};
  args.insert(args.end(), extra.begin(), extra.end());
  return std::make_unique<Process>(kPeerPath, args, /*merge_stderr=*/true);
}

}  // namespace

TEST_CASE("a via client reaches a via-only server of 'another host' at its published node address",
          "[orb][via][hosts]") {
  Server server(kViaOnly, Threading::kPerConnection, kThisHost);
  const std::string forged = from_another_host(server);
  REQUIRE(!forged.empty());
  // The server publishes giop:via alone: the calls can only go over it,
  // through the node's tcp listener. The VIs themselves meet on this host
  // (their handshake says so), so the wire is not used here; tests/hosts/
  // runs them over it.
  std::vector<std::string> extra = kThisHost;
  auto client = start_traced_client(forged, "50", extra);
  CHECK(client->wait() == kClientOk);
  CHECK(server.stop() == 0);
}

TEST_CASE("a via client says why a via server of another host without -ORBclanHost is out of reach",
          "[orb][via][hosts][fallback]") {
  Server server(kViaOnly, Threading::kPerConnection);
  const std::string forged = from_another_host(server);
  REQUIRE(!forged.empty());
  std::vector<std::string> extra = kThisHost;
  extra.insert(extra.end(), {"--expect", "TRANSIENT"});
  auto client = start_traced_client(forged, "1", extra);
  auto line = client->wait_for_line("clanorb: not using giop:via:", 20s, /*anywhere=*/true);
  REQUIRE(line);
  CHECK(line->find("publishes no address for other hosts (its -ORBclanHost)") != std::string::npos);
  CHECK(client->wait() == kClientOk);
  CHECK(server.stop() == 0);
}

TEST_CASE("a via client without -ORBclanHost says why it does not use a via server of another host, uses tcp",
          "[orb][via][hosts][fallback]") {
  Server server(kTcpAndVia, Threading::kPerConnection, kThisHost);
  const std::string forged = from_another_host(server);
  REQUIRE(!forged.empty());
  auto client = start_traced_client(forged, "3", {});
  auto line = client->wait_for_line("clanorb: not using giop:via:", 20s, /*anywhere=*/true);
  REQUIRE(line);
  CHECK(line->find("this process has no -ORBclanHost at which the server could write back to it") !=
        std::string::npos);
  CHECK(client->wait() == kClientOk);
  CHECK(server.stop() == 0);
}
