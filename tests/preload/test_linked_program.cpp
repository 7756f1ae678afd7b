// A program that links clanorb itself (orb_test_peer) with the preload too:
// the preload sees the transports already registered and loads nothing, so
// nothing is registered twice (omniORB aborts on a duplicate option) and the
// call goes over giop:clan as without the preload.
#include "orb/protocol.hpp"
#include "preload/preload_fixture.hpp"

using namespace clan::preloadtest;

TEST_CASE("into a program that links clanorb, the transports work once", "[preload]") {
  const std::string peer = ORB_TEST_PEER;
  Process server(peer, {"server", "-ORBendPoint", "giop:clan::"}, false, preloaded());
  auto echo_line = server.wait_for_line("echo IOR:", 30s);
  REQUIRE(echo_line);
  REQUIRE(server.wait_for_line("ready", 30s));

  auto client = run_to_end(peer,
                           {"client", "--ior", echo_line->substr(echo_line->find("IOR:")),
                            "--calls", "3", "-ORBtraceLevel", "25"},
                           preloaded());
  INFO(client.output);
  CHECK(client.code == clan::orbtest::kClientOk);
  CHECK(client.output.find("Client opened connection to giop:clan:") != std::string::npos);
  server.close_stdin();
  CHECK(server.wait() == 0);
}
