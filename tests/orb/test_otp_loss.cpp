// giop:otp over a lossy link: both directions drop (and corrupt) datagrams
// under a seeded fault model, and omniTransport still delivers every
// exactly-once call exactly once and intact, and every one-way at most once
// and whole. One loss rate per test case: the client ORB's options are set
// once per test process (through the environment, as omniORB allows).
#include <stdlib.h>

#include <chrono>
#include <string>
#include <thread>

#include "clan_emul/fault_model.hpp"
#include "orb/orb_fixture.hpp"

using namespace clan::orbtest;

namespace {

void run_over_loss(const char* loss_ppm, const char* corrupt_ppm) {
  setenv("ORBotpLossPpm", loss_ppm, 1);
  setenv("ORBotpCorruptPpm", corrupt_ppm, 1);
  setenv("ORBotpSeed", "11", 1);
  const Transport otp{"otp", {"giop:otp::"}};
  const Threading mode = GENERATE(Threading::kPerConnection, Threading::kPool);
  INFO("server: " << to_string(mode));
  Server server(otp, mode,
                {"-ORBotpLossPpm", loss_ppm, "-ORBotpCorruptPpm", corrupt_ppm, "-ORBotpSeed", "29"});

  // Exactly-once echo: every reply is the request's own.
  echo_var e = server.echo();
  REQUIRE(!CORBA::is_nil(e));
  int good = 0;
  for (int i = 0; i < 300; ++i) {
    const std::string msg = "call " + std::to_string(i) + std::string(i % 700, 'x');
    CORBA::String_var r = e->echoString(msg.c_str());
    if (msg == r.in()) ++good;
  }
  CHECK(good == 300);

  // Exactly-once ttcp: the servant checks each buffer and counts bytes, so a
  // duplicate execution or a lost call shows in the total.
  ttcp_var tt = server.ttcp_obj();
  REQUIRE(!CORBA::is_nil(tt));
  const CORBA::ULongLong before = tt->received();
  const size_t kSize = 20000;  // several packets per call: fragments get lost too
  ttcp::Buffer buf = pattern_buffer(kSize);
  for (int i = 0; i < 100; ++i) tt->receive_exactly_once(buf);
  CHECK(tt->received() - before == 100 * kSize);

  // One-ways: at most once and whole, so the total grows by a multiple of
  // the size and by no more than was sent.
  const CORBA::ULongLong base = tt->received();
  const size_t kOneway = 3000;
  ttcp::Buffer ow = pattern_buffer(kOneway);
  for (int i = 0; i < 200; ++i) tt->receive_at_most_once(ow);
  const CORBA::ULongLong got = tt->received() - base;  // an exactly-once call after them
  CHECK(got <= 200 * kOneway);
  CHECK(got % kOneway == 0);
  CHECK(got != CORBA::ULongLong(~0));  // the servant saw no corrupt one-way
  CHECK(server.stop() == 0);
}

}  // namespace

TEST_CASE("otp under loss: 1 % drop, 0.1 % corruption each way", "[orb][otp][loss]") {
  run_over_loss("10000", "1000");
}

TEST_CASE("otp under loss: 5 % drop, 0.5 % corruption each way", "[orb][otp][loss]") {
  run_over_loss("50000", "5000");
}

// An idle client's acknowledgement lost: the server repeats its reply into a
// link nobody reads, and after the peer timeout (5 s here) without an answer gives up on the
// connection, so the client's next call on it would fail (it did, against a
// thread-per-connection server, before the watch). The client's idle watch
// takes those repeats in and acknowledges again. The client drops
// exactly its third datagram (the seed is chosen for that): the first two
// are the LocateRequest and the call, the third its idle CALL_ACK.
TEST_CASE("otp: an idle client whose acknowledgement was lost answers the server's repeats and keeps its connection",
          "[orb][otp][loss]") {
  constexpr double kDrop = 0.25;
  uint64_t seed = 0;
  for (uint64_t s = 1; seed == 0 && s < 1'000'000; ++s) {
    clan::FaultInjector f(clan::FaultModel{s, kDrop, 0.0, {}});
    bool want = true;
    for (int i = 0; i < 12 && want; ++i) {
      const bool drop = f.next().action == clan::FaultAction::kDrop;
      want = drop == (i == 2);
    }
    if (want) seed = s;
  }
  REQUIRE(seed != 0);
  setenv("ORBotpLossPpm", std::to_string(static_cast<int>(kDrop * 1e6)).c_str(), 1);
  setenv("ORBotpSeed", std::to_string(seed).c_str(), 1);
  setenv("CLAN_PEER_TIMEOUT_MS", "5000", 1);  // the server's give-up horizon
  const Transport otp{"otp", {"giop:otp::"}};
  const Threading mode = GENERATE(Threading::kPerConnection, Threading::kPool);
  INFO("server: " << to_string(mode));
  Server server(otp, mode, {"-ORBotpLossPpm", "0"});  // the server's datagrams all arrive
  echo_var e = server.echo();
  REQUIRE(!CORBA::is_nil(e));
  CORBA::String_var r = e->echoString("before");
  CHECK(std::string(r.in()) == "before");
  // Idle past the server's give-up horizon (engine_config: the peer timeout).
  std::this_thread::sleep_for(std::chrono::milliseconds(6500));
  try {
    r = e->echoString("after");
    CHECK(std::string(r.in()) == "after");
  } catch (const CORBA::SystemException& ex) {
    FAIL("the call after the idle period failed: " << ex._name() << " minor " << ex.minor());
  }
  CHECK(server.stop() == 0);
}
