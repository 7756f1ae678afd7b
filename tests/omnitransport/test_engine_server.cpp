// Server machine and server error cases (i)-(vii): one hand-built packet into
// one engine, then check what it queued, delivered and its new state.
#include <catch2/catch.hpp>

#include "wire.hpp"

namespace otp::test {

namespace {
constexpr uint64_t kMs = 1'000'000;
EngineConfig small_cfg() {
  EngineConfig c;
  c.mtu = kHeaderSize + 100;
  c.pool_buffers = 4;
  c.max_retries = 3;
  return c;
}
// A server that handled call 1 and holds a complete reply of n packets.
Engine holding_reply(size_t n = 2) {
  Engine e(Role::kServer, small_cfg());
  feed(e, pkt(PacketType::kComplete, 1, 0, true, 5));
  REQUIRE(e.state() == State::kReplying);
  received(e);
  std::vector<std::byte> r(100 * n);
  REQUIRE(e.send(r.data(), r.size(), true, true, 0) == Errc::kOk);
  REQUIRE(e.state() == State::kIdle);
  REQUIRE(sent(e).size() == n);
  return e;
}
}  // namespace

TEST_CASE("server Idle on first packet of an exactly-once call delivers it and enters Replying", "[otp][server]") {
  Engine e(Role::kServer, small_cfg());
  feed(e, pkt(PacketType::kPartial, 1, 0, true, 5));
  CHECK(e.state() == State::kReceivingRequest);
  feed(e, pkt(PacketType::kComplete, 1, 1, true, 3));
  CHECK(e.state() == State::kReplying);
  auto rx = received(e);
  REQUIRE(rx.size() == 2);
  CHECK(rx[0].exactly_once);
  CHECK_FALSE(rx[0].complete);
  CHECK(rx[1].complete);
  CHECK(sent(e).empty());  // no acks on the wire: the reply is the ack
  CHECK(e.stats().calls == 1);
}

TEST_CASE("server Idle on send is refused (only replies)", "[otp][server]") {
  Engine e(Role::kServer, small_cfg());
  CHECK(e.send("x", 1, true, true, 0) == Errc::kWrongState);
}

TEST_CASE("server Idle holding reply on timeout retransmits it after ack_delay + rto (i)", "[otp][server]") {
  Engine e = holding_reply();
  REQUIRE(e.next_timer() == 12 * kMs);
  e.on_timer(12 * kMs);
  auto out = sent(e);
  REQUIRE(out.size() == 2);
  CHECK(out[0].pkt_seq == 0);
  CHECK(out[1].type == PacketType::kComplete);
  CHECK(e.next_timer() == 14 * kMs);
}

TEST_CASE("server Idle holding reply on repeated timeouts backs off, the next call resets it", "[otp][server]") {
  EngineConfig c = small_cfg();
  c.max_retries = 100;
  c.rto_max_ns = 8 * kMs;
  Engine e(Role::kServer, c);
  feed(e, pkt(PacketType::kComplete, 1, 0, true, 5));
  received(e);
  REQUIRE(e.send("r", 1, true, true, 0) == Errc::kOk);
  sent(e);
  std::vector<uint64_t> due;
  for (int i = 0; i < 6; ++i) {
    due.push_back(*e.next_timer());
    e.on_timer(due.back());
    CHECK(sent(e).size() == 1);  // the reply again
  }
  // ack_delay + rto, then rto, 2 rto, 4 rto, 8 rto capped at 8 ms.
  CHECK(due == std::vector<uint64_t>{12 * kMs, 14 * kMs, 18 * kMs, 26 * kMs, 34 * kMs, 42 * kMs});
  feed(e, pkt(PacketType::kComplete, 2, 0, true, 5), 43 * kMs);  // call 2 acknowledges the reply
  received(e);
  REQUIRE(e.send("r", 1, true, true, 44 * kMs) == Errc::kOk);
  CHECK(e.next_timer() == 56 * kMs);
  e.on_timer(56 * kMs);
  CHECK(e.next_timer() == 58 * kMs);
}

TEST_CASE("retries_lasting: timeouts with the backoff that cover a span", "[otp][server]") {
  EngineConfig c;
  c.rto_ns = 2 * kMs;
  c.rto_max_ns = 32 * kMs;
  CHECK(backoff_interval(c, 0) == 2 * kMs);
  CHECK(backoff_interval(c, 1) == 2 * kMs);
  CHECK(backoff_interval(c, 2) == 4 * kMs);
  CHECK(backoff_interval(c, 5) == 32 * kMs);
  CHECK(backoff_interval(c, 50) == 32 * kMs);
  CHECK(retries_lasting(c, 2 * kMs) == 1);
  CHECK(retries_lasting(c, 4 * kMs) == 2);
  CHECK(retries_lasting(c, 5 * kMs) == 3);  // 2 + 2 + 4
  // 2+2+4+8+16 = 32 ms in 5, then 32 ms each: 5 s needs 5 + ceil(4968 / 32) = 161.
  CHECK(retries_lasting(c, 5000 * kMs) == 161);
  c.rto_max_ns = c.rto_ns;  // no backoff
  CHECK(retries_lasting(c, 5000 * kMs) == 2500);
}

TEST_CASE("server Idle holding reply on CALL_ACK frees it, timeout then does nothing (i)", "[otp][server]") {
  Engine e = holding_reply();
  feed(e, pkt(PacketType::kCallAck, 1, 0), kMs);
  CHECK(e.stats().buffers_held == 0);
  CHECK_FALSE(e.next_timer());
  e.on_timer(50 * kMs);
  CHECK(sent(e).empty());
}

TEST_CASE("server Idle holding reply on NACK for the call just handled retransmits from the packet (ii, iii)",
          "[otp][server]") {
  Engine e = holding_reply(3);
  feed(e, pkt(PacketType::kNack, 1, 1), kMs);
  auto out = sent(e);
  REQUIRE(out.size() == 2);
  CHECK(out[0].pkt_seq == 1);
  CHECK(out[1].pkt_seq == 2);
  CHECK(e.stats().buffers_held == 2);
  feed(e, pkt(PacketType::kNack, 1, 0), kMs);  // from 0: all held buffers
  CHECK(sent(e).size() == 2);
}

TEST_CASE("server Idle holding reply on NACK for a call not started acks the reply and NACKs (iv)",
          "[otp][server]") {
  Engine e = holding_reply();
  feed(e, pkt(PacketType::kNack, 2, 0), kMs);
  CHECK(e.stats().buffers_held == 0);
  CHECK_FALSE(e.next_timer());
  auto out = sent(e);
  REQUIRE(out.size() == 1);
  CHECK(out[0].type == PacketType::kNack);
  CHECK(out[0].call_seq == 2);
  CHECK(out[0].pkt_seq == 0);
  feed(e, pkt(PacketType::kComplete, 2, 0, true, 4), kMs);  // the retransmitted request
  CHECK(e.state() == State::kReplying);
  CHECK(received(e).size() == 1);
}

TEST_CASE("server ReceivingRequest on dropped middle packet NACKs the client (v)", "[otp][server]") {
  Engine e(Role::kServer, small_cfg());
  feed(e, pkt(PacketType::kPartial, 1, 0, true, 5));
  feed(e, pkt(PacketType::kPartial, 1, 2, true, 5));
  feed(e, pkt(PacketType::kComplete, 1, 3, true, 5));
  auto out = sent(e);
  REQUIRE(out.size() == 1);
  CHECK(out[0].type == PacketType::kNack);
  CHECK(out[0].pkt_seq == 1);
  CHECK(received(e).size() == 1);
  CHECK(e.state() == State::kReceivingRequest);
}

TEST_CASE("server ReceivingOneWay on dropped middle packet delivers ABORT and ignores the rest (v)",
          "[otp][server]") {
  Engine e(Role::kServer, small_cfg());
  feed(e, pkt(PacketType::kPartial, 1, 0, false, 5));
  CHECK(e.state() == State::kReceivingOneWay);
  feed(e, pkt(PacketType::kPartial, 1, 2, false, 5));
  CHECK(e.state() == State::kIgnoringOneWay);
  feed(e, pkt(PacketType::kComplete, 1, 3, false, 5));
  CHECK(e.state() == State::kIdle);
  auto rx = received(e);
  REQUIRE(rx.size() == 2);
  CHECK(rx[1].what == Delivery::kAbort);
  CHECK(sent(e).empty());  // never NACK a one-way
  CHECK(e.stats().oneways_aborted == 1);
}

TEST_CASE("server ReceivingOneWay on first packet of the next call delivers ABORT then the call", "[otp][server]") {
  Engine e(Role::kServer, small_cfg());
  feed(e, pkt(PacketType::kPartial, 1, 0, false, 5));
  feed(e, pkt(PacketType::kComplete, 2, 0, true, 5));  // the one-way's COMPLETE was lost
  auto rx = received(e);
  REQUIRE(rx.size() == 3);
  CHECK(rx[1].what == Delivery::kAbort);
  CHECK(rx[2].what == Delivery::kData);
  CHECK(e.state() == State::kReplying);
}

TEST_CASE("server Idle on out-of-step first packet proceeds with the call (vi)", "[otp][server]") {
  Engine e = holding_reply();
  feed(e, pkt(PacketType::kComplete, 4, 0, true, 5), kMs);  // calls 2, 3 were lost one-ways
  CHECK(e.state() == State::kReplying);
  CHECK(received(e).size() == 1);
  CHECK(e.stats().buffers_held == 0);  // previous reply implicitly acknowledged
  CHECK(sent(e).empty());
}

TEST_CASE("server Idle on one-way without its first packet ignores the call (vii)", "[otp][server]") {
  Engine e(Role::kServer, small_cfg());
  feed(e, pkt(PacketType::kPartial, 1, 1, false, 5));
  CHECK(e.state() == State::kIgnoringOneWay);
  feed(e, pkt(PacketType::kPartial, 1, 2, false, 5));
  feed(e, pkt(PacketType::kComplete, 1, 3, false, 5));
  CHECK(e.state() == State::kIdle);
  CHECK(received(e).empty());  // the strand never started it: no ABORT
  CHECK(sent(e).empty());
  CHECK(e.stats().oneways_ignored == 1);
}

TEST_CASE("server Idle on exactly-once call without its first packet acks previous and NACKs (vii)",
          "[otp][server]") {
  Engine e = holding_reply();
  feed(e, pkt(PacketType::kPartial, 2, 1, true, 5), kMs);
  feed(e, pkt(PacketType::kComplete, 2, 2, true, 5), kMs);
  CHECK(e.stats().buffers_held == 0);
  auto out = sent(e);
  REQUIRE(out.size() == 1);
  CHECK(out[0].type == PacketType::kNack);
  CHECK(out[0].call_seq == 2);
  CHECK(out[0].pkt_seq == 0);
  CHECK(received(e).empty());
  CHECK(e.state() == State::kIdle);
}

TEST_CASE("server Idle holding reply on repeated request resends the reply, never redelivers", "[otp][server]") {
  Engine e = holding_reply();
  feed(e, pkt(PacketType::kComplete, 1, 0, true, 5), kMs);
  CHECK(received(e).empty());
  CHECK(sent(e).size() == 2);
  CHECK(e.stats().duplicates == 1);
  feed(e, pkt(PacketType::kComplete, 1, 0, true, 5), kMs + 1);  // rate-limited
  CHECK(sent(e).empty());
}

TEST_CASE("server Replying on NACK for the call says it is working (CALL_ACK)", "[otp][server]") {
  Engine e(Role::kServer, small_cfg());
  feed(e, pkt(PacketType::kComplete, 1, 0, true, 5));
  feed(e, pkt(PacketType::kNack, 1, 0), 2 * kMs);
  auto out = sent(e);
  REQUIRE(out.size() == 1);
  CHECK(out[0].type == PacketType::kCallAck);
  CHECK(out[0].call_seq == 1);
  CHECK(e.state() == State::kReplying);
}

TEST_CASE("server ReceivingRequest on NACK (request tail lost) NACKs from the missing packet", "[otp][server]") {
  Engine e(Role::kServer, small_cfg());
  feed(e, pkt(PacketType::kPartial, 1, 0, true, 5));
  feed(e, pkt(PacketType::kNack, 1, 0), 2 * kMs);
  auto out = sent(e);
  REQUIRE(out.size() == 1);
  CHECK(out[0].type == PacketType::kNack);
  CHECK(out[0].pkt_seq == 1);
}

TEST_CASE("server ReceivingRequest on RECLAIM sends RECLAIM_ACK with the next expected packet", "[otp][server]") {
  Engine e(Role::kServer, small_cfg());
  feed(e, pkt(PacketType::kPartial, 1, 0, true, 5));
  feed(e, pkt(PacketType::kPartial, 1, 1, true, 5));
  feed(e, pkt(PacketType::kReclaim, 1, 0));
  auto out = sent(e);
  REQUIRE(out.size() == 1);
  CHECK(out[0].type == PacketType::kReclaimAck);
  CHECK(out[0].pkt_seq == 2);
  feed(e, pkt(PacketType::kReclaim, 2, 0));  // call not started: nothing received
  out = sent(e);
  REQUIRE(out.size() == 1);
  CHECK(out[0].call_seq == 2);
  CHECK(out[0].pkt_seq == 0);
}

TEST_CASE("server Idle holding reply on max_retries timeouts goes Zombie with BAD", "[otp][server]") {
  Engine e = holding_reply();
  for (int i = 0; i < 10 && e.next_timer(); ++i) e.on_timer(*e.next_timer());
  CHECK(e.state() == State::kZombie);
  CHECK(received(e).at(0).what == Delivery::kBad);
  CHECK(e.stats().buffers_held == 0);
}

}  // namespace otp::test
