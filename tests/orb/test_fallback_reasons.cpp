// A clanorb client that does not use an IOR's clanorb address says why at
// -ORBtraceLevel 10 (clanorb::kFallbackTraceLevel), then reaches the server
// over tcp: a server on another host (its component's boot id), in another
// runtime directory, or a connect that fails.
#include <string>
#include <vector>

#include "orb/orb_fixture.hpp"
#include "orb_transports/common/component_usability.hpp"
#include "tools/ior_forgery.hpp"

using namespace clan::orbtest;

namespace {

const Transport kTcpAndClan{"tcp+clan", {"giop:tcp:127.0.0.1:", "giop:clan::"}};

// orb_test_peer client at trace level 10, its stderr read with its stdout;
// `env` ("NAME=value") set for it through env(1).
std::unique_ptr<Process> start_traced_client(const std::string& ior,
                                             const std::vector<std::string>& env = {}) {
  std::vector<std::string> args = env;
  for (const std::string& a : {kPeerPath, std::string("client"), std::string("--ior"), ior,
                               std::string("--calls"), std::string("3"),
                               std::string("-ORBtraceLevel"), std::string("10")})
    args.push_back(a);
  return std::make_unique<Process>("/usr/bin/env", args, /*merge_stderr=*/true);
}

// The IOR with the server's node name replaced by one of the same length that
// no process holds: the component is this host's, the connect must fail.
std::string with_absent_node(const std::string& ior, pid_t server) {
  const std::string node = "orb" + std::to_string(server);
  std::string absent = node;
  absent.back() = absent.back() == '9' ? '8' : '9';
  absent[3] = 'x';  // "orbx...": not a name any process's default node has
  const std::string from = clanorb::test::to_hex(":" + node + ":");
  const std::string to = clanorb::test::to_hex(":" + absent + ":");
  std::string out = ior;
  const size_t at = out.find(from);
  if (at == std::string::npos) return "";
  out.replace(at, from.size(), to);
  return out;
}

}  // namespace

TEST_CASE("a client says at trace level 10 that a clan address is another host's, uses tcp",
          "[orb][fallback]") {
  Server server(kTcpAndClan, Threading::kPerConnection);
  const std::string forged =
      clanorb::test::with_boot_id(server.echo_ior(), clanorb::test::another_boot_id());
  REQUIRE(!forged.empty());
  auto client = start_traced_client(forged);
  auto line = client->wait_for_line("clanorb: not using giop:clan:", 20s, /*anywhere=*/true);
  REQUIRE(line);
  CHECK(line->find("from an object reference: its server runs on another host (boot id ") != std::string::npos);
  CHECK(line->find("publishes no address for other hosts (its -ORBclanHost)") != std::string::npos);
  CHECK(line->find("; omniORB tries the reference's other addresses, if any") != std::string::npos);
  CHECK(client->wait() == kClientOk);
  CHECK(server.stop() == 0);
}

TEST_CASE("a client says at trace level 10 that a clan address is another runtime directory's",
          "[orb][fallback]") {
  Server server(kTcpAndClan, Threading::kPerConnection);
  TempDir elsewhere;
  auto client = start_traced_client(server.echo_ior(), {"CLAN_RUNTIME_DIR=" + elsewhere.path()});
  auto line = client->wait_for_line("clanorb: not using giop:clan:", 20s, /*anywhere=*/true);
  REQUIRE(line);
  CHECK(line->find("its server uses the runtime directory " + clanorb::this_runtime_dir() +
                   ", this process uses " + elsewhere.path() +
                   " (another user, or another CLAN_RUNTIME_DIR)") != std::string::npos);
  CHECK(client->wait() == kClientOk);
  CHECK(server.stop() == 0);
}

TEST_CASE("a client says at trace level 10 why a clan connect failed, then uses tcp",
          "[orb][fallback]") {
  Server server(kTcpAndClan, Threading::kPerConnection);
  const std::string forged = with_absent_node(server.echo_ior(), server.pid());
  REQUIRE(!forged.empty());
  auto client = start_traced_client(forged);
  auto line = client->wait_for_line("clanorb: cannot connect to giop:clan:orbx", 20s,
                                    /*anywhere=*/true);
  REQUIRE(line);
  CHECK(line->find("is running in the runtime directory") != std::string::npos);
  CHECK(client->wait() == kClientOk);
  CHECK(server.stop() == 0);
}
