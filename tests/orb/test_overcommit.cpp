// A server with eight times more clients than NIC frames (paper 004 sect.
// 6.4): every client's calls are answered, right, within the call timeout,
// in both threading modes, and the server's log shows that connections lost
// their frames and were made resident again on demand.
#include <memory>
#include <string>
#include <vector>

#include "orb/orb_fixture.hpp"

using namespace clan::orbtest;
using Catch::Matchers::Contains;

TEST_CASE("a server with 4 frames serves 32 concurrent clients, each call within its timeout",
          "[orb][overcommit]") {
  const Transport t = GENERATE(from_range(fabric_transports()));
  const Threading mode = GENERATE(Threading::kPerConnection, Threading::kPool);
  INFO(t.name << ", " << to_string(mode));
  constexpr int kFrames = 4, kClients = 8 * kFrames, kCalls = 20;
  Server server(t, mode, {"-ORBclanFrames", std::to_string(kFrames)}, /*merge_stderr=*/true);

  // Each client process is a connection of its own; every call it makes has
  // a timeout (10 s), so none waits unboundedly for a frame.
  std::vector<std::unique_ptr<Process>> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.push_back(start_client({"--ior", server.echo_ior(), "--calls", std::to_string(kCalls),
                                    "--size", "64", "--tag", "c" + std::to_string(c),
                                    "-ORBclientCallTimeOutPeriod", "10000"}));
  }
  for (int c = 0; c < kClients; ++c) {
    INFO("client " << c);
    CHECK(clients[static_cast<size_t>(c)]->wait(std::chrono::seconds(40)) == kClientOk);
  }
  CHECK(server.stop() == 0);
  // The server logs its re-mappings when its ORB is destroyed.
  const auto line = server.wait_for_log("made connections resident");
  REQUIRE(line);
  CHECK_THAT(*line, Contains("for want of frames (-ORBclanFrames " + std::to_string(kFrames) + ")"));
}
