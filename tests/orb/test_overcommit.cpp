// A server with eight times more clients than NIC frames (paper 004 sect.
// 6.4), in both threading modes: all the clients are connected at once, and
// every call is answered, right, within the call timeout, though each
// client's endpoint on the server must be made resident again to take its
// next request. Each client makes a first call and then waits at a barrier
// until all have made theirs; so when the second round starts the server
// holds every connection, at most one per frame resident, and the round
// costs at least one re-mapping per connection beyond the frames.
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "orb/orb_fixture.hpp"

using namespace clan::orbtest;
using Catch::Matchers::Contains;

TEST_CASE(
    "a server with 4 frames serves 32 clients connected at once, re-mapping each endpoint beyond the frames",
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
                                    "--pause-after", "1", "--size", "64", "--tag", "c" + std::to_string(c),
                                    "-ORBclientCallTimeOutPeriod", "10000"}));
  }
  // The barrier: every client's first call answered, its connection open.
  using std::chrono::milliseconds;
  const auto barrier_limit = std::chrono::steady_clock::now() + std::chrono::seconds(40);
  for (int c = 0; c < kClients; ++c) {
    INFO("client " << c << " at the barrier");
    const auto left =
        std::chrono::duration_cast<milliseconds>(barrier_limit - std::chrono::steady_clock::now());
    REQUIRE(clients[static_cast<size_t>(c)]->wait_for_line(kPausedLine, std::max(left, milliseconds(1))));
  }
  const auto before = server.remaps();
  REQUIRE(before);
  for (auto& client : clients) REQUIRE(client->send_line(kGoLine));
  for (int c = 0; c < kClients; ++c) {
    INFO("client " << c);
    CHECK(clients[static_cast<size_t>(c)]->wait(std::chrono::seconds(40)) == kClientOk);
  }
  const auto after = server.remaps();
  REQUIRE(after);
  INFO("re-mappings before the second round " << *before << ", after it " << *after);
  CHECK(*after - *before >= static_cast<unsigned long long>(kClients - kFrames));

  CHECK(server.stop() == 0);
  // The server also logs its re-mappings when its ORB is destroyed.
  const auto line = server.wait_for_log("made connections resident");
  REQUIRE(line);
  CHECK_THAT(*line, Contains("for want of frames (-ORBclanFrames " + std::to_string(kFrames) + ")"));
}
