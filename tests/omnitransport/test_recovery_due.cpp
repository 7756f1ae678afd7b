// Engine::recovery_due(): when recovery traffic is due if a packet was lost
// (the driver polls rather than sleeps around then). Names: role + state.
#include <catch2/catch.hpp>

#include "wire.hpp"

namespace otp::test {

namespace {
constexpr uint64_t kMs = 1'000'000;
}

TEST_CASE("recovery_due: client WaitingForReply is its retransmission timer, Idle none", "[otp][recovery]") {
  Engine e(Role::kClient);
  CHECK_FALSE(e.recovery_due());
  const char req[4]{};
  REQUIRE(e.send(req, sizeof req, true, true, 5 * kMs) == Errc::kOk);
  sent(e);
  REQUIRE(e.recovery_due());
  CHECK(*e.recovery_due() == 5 * kMs + e.config().rto_ns);
  CHECK(e.recovery_due() == e.next_timer());
  e.on_timer(*e.next_timer());  // timeout: NACK, timer moves on
  CHECK(*e.recovery_due() == 5 * kMs + 2 * e.config().rto_ns);
  feed(e, pkt(PacketType::kComplete, 1, 0, true, 4), 8 * kMs);
  CHECK(e.state() == State::kIdle);
  CHECK_FALSE(e.recovery_due());  // only the idle ack timer is left
  CHECK(e.next_timer());
}

TEST_CASE("recovery_due: client one-way sends none", "[otp][recovery]") {
  Engine e(Role::kClient);
  const char req[4]{};
  REQUIRE(e.send(req, sizeof req, true, false, 0) == Errc::kOk);
  CHECK_FALSE(e.recovery_due());
}

TEST_CASE("recovery_due: server with a held reply is rto after the reply, none once acknowledged", "[otp][recovery]") {
  Engine e(Role::kServer);
  CHECK_FALSE(e.recovery_due());
  feed(e, pkt(PacketType::kComplete, 1, 0, true, 4), 1 * kMs);
  CHECK_FALSE(e.recovery_due());  // Replying: the servant is working
  const char rep[4]{};
  REQUIRE(e.send(rep, sizeof rep, true, true, 3 * kMs) == Errc::kOk);
  REQUIRE(e.recovery_due());
  CHECK(*e.recovery_due() == 3 * kMs + e.config().rto_ns);
  feed(e, pkt(PacketType::kCallAck, 1, 0), 4 * kMs);
  CHECK_FALSE(e.recovery_due());
}

TEST_CASE("recovery_due: server after the next call (implicit ack) none until its reply", "[otp][recovery]") {
  Engine e(Role::kServer);
  feed(e, pkt(PacketType::kComplete, 1, 0, true, 4), 0);
  const char rep[4]{};
  REQUIRE(e.send(rep, sizeof rep, true, true, 0) == Errc::kOk);
  REQUIRE(e.recovery_due());
  feed(e, pkt(PacketType::kComplete, 2, 0, true, 4), 1 * kMs);
  CHECK(e.state() == State::kReplying);
  CHECK_FALSE(e.recovery_due());
}

}  // namespace otp::test
