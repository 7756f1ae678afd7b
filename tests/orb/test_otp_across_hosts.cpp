// giop:otp to a server of another host, on one machine: the server listens
// for other hosts on 127.0.0.1 (-ORBclanHost) and its reference is given
// another boot id, so a client with -ORBclanHost of its own takes it for a
// server of another host and connects to NODE@127.0.0.1:PORT over udp (the
// server follows the client's channel). Calls under loss all succeed; a
// client without -ORBclanHost says why not giop:otp and uses tcp. The two
// real hosts of scripts/two_hosts.sh run the same in tests/hosts/.
#include <string>
#include <vector>

#include "orb/orb_fixture.hpp"
#include "tools/ior_forgery.hpp"

using namespace clan::orbtest;

namespace {

// orb_test_peer client of `ior` at trace level 10, its stderr read with its
// stdout, with `extra` ORB options.
std::unique_ptr<Process> start_traced_client(const std::string& ior, const std::vector<std::string>& extra) {
  std::vector<std::string> args{"client", "--ior", ior, "--calls", "200", "--size", "5000",
                                "-ORBtraceLevel", "10"};
  args.insert(args.end(), extra.begin(), extra.end());
  return std::make_unique<Process>(kPeerPath, args, /*merge_stderr=*/true);
}

}  // namespace

TEST_CASE("otp: a client of another host's reference calls over udp at the server's -ORBclanHost, under loss",
          "[orb][otp][hosts]") {
  const Transport otp{"otp", {"giop:otp::"}};
  const Threading mode = GENERATE(Threading::kPerConnection, Threading::kPool);
  INFO("server: " << to_string(mode));
  Server server(otp, mode, {"-ORBclanHost", "127.0.0.1", "-ORBotpLossPpm", "20000", "-ORBotpSeed", "3"});
  const std::string forged = clanorb::test::with_boot_id(server.echo_ior(), clanorb::test::another_boot_id());
  REQUIRE(!forged.empty());
  auto client = start_traced_client(forged, {"-ORBclanHost", "127.0.0.1", "-ORBotpLossPpm", "20000"});
  // At its end the connection says where it went: the node at its address
  // for other hosts, and the losses it repaired.
  auto line = client->wait_for_line("giop:otp: connection ", 30s, /*anywhere=*/true);
  REQUIRE(line);
  INFO(*line);
  CHECK(line->find("@127.0.0.1:") != std::string::npos);
  CHECK(line->find(" ends: ") != std::string::npos);
  CHECK(line->find("timeouts 0,") == std::string::npos);
  CHECK(client->wait() == kClientOk);
  CHECK(server.stop() == 0);
}

TEST_CASE("otp: a client without -ORBclanHost says why not giop:otp for another host's reference, uses tcp",
          "[orb][otp][hosts][fallback]") {
  const Transport tcp_and_otp{"tcp+otp", {"giop:tcp:127.0.0.1:", "giop:otp::"}};
  Server server(tcp_and_otp, Threading::kPerConnection, {"-ORBclanHost", "127.0.0.1"});
  const std::string forged = clanorb::test::with_boot_id(server.echo_ior(), clanorb::test::another_boot_id());
  REQUIRE(!forged.empty());
  auto client = start_traced_client(forged, {});
  auto line = client->wait_for_line("clanorb: not using giop:otp:", 20s, /*anywhere=*/true);
  REQUIRE(line);
  INFO(*line);
  CHECK(line->find("this process has no -ORBclanHost") != std::string::npos);
  CHECK(client->wait() == kClientOk);
  CHECK(server.stop() == 0);
}
