// A client without the clanorb plugin falls back to tcp: the server publishes
// giop:tcp and giop:clan, and a client built without clanorb::transports
// ignores the clan component it cannot use. Also: transport rules given by
// the user are respected rather than extended.
#include <string>

#include "orb/orb_fixture.hpp"

using namespace clan::orbtest;

namespace {
const Transport kTcpAndClan{"tcp+clan", {"giop:tcp:127.0.0.1:", "giop:clan::"}};
const Transport kClanOnly{"clan", {"giop:clan::"}};

std::unique_ptr<Process> start_plain_client(const std::vector<std::string>& args) {
  std::vector<std::string> all{"client"};
  all.insert(all.end(), args.begin(), args.end());
  return std::make_unique<Process>(ORB_TEST_PEER_PLAIN, all);
}
}  // namespace

TEST_CASE("a client without the plugin reaches a tcp+clan server over tcp", "[orb][fallback]") {
  Server server(kTcpAndClan, Threading::kPerConnection);
  auto plain = start_plain_client({"--ior", server.echo_ior(), "--calls", "20", "--tag", "plain"});
  CHECK(plain->wait() == kClientOk);
  // And one with the plugin, on the same reference (it prefers clan).
  auto with_plugin = start_client({"--ior", server.echo_ior(), "--calls", "20", "--tag", "plugin"});
  CHECK(with_plugin->wait() == kClientOk);
  CHECK(server.stop() == 0);
}

TEST_CASE("a client without the plugin cannot reach a clan-only server", "[orb][fallback]") {
  // This is what shows that the plain client above really went over tcp.
  Server server(kClanOnly, Threading::kPerConnection);
  auto plain = start_plain_client(
      {"--ior", server.echo_ior(), "--calls", "1", "--expect", "TRANSIENT", "--tag", "plain"});
  CHECK(plain->wait() == kClientOk);
  CHECK(server.stop() == 0);
}

TEST_CASE("a client transport rule given by the user is respected", "[orb][fallback]") {
  Server server(kClanOnly, Threading::kPerConnection);
  // "* tcp": the user allows tcp only, so the clan address is filtered out.
  auto restricted = start_client({"--ior", server.echo_ior(), "--calls", "1", "--expect",
                                  "TRANSIENT", "-ORBclientTransportRule", "* tcp"});
  CHECK(restricted->wait() == kClientOk);
  auto allowed = start_client({"--ior", server.echo_ior(), "--calls", "5",
                               "-ORBclientTransportRule", "* clan,tcp"});
  CHECK(allowed->wait() == kClientOk);
  CHECK(server.stop() == 0);
}
