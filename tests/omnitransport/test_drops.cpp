// Each error case reproduced by a targeted drop in a two-engine simulation.
#include <catch2/catch.hpp>

#include "sim_harness.hpp"

namespace otp::test {

namespace {
EngineConfig cfg() {
  EngineConfig c;
  c.mtu = kHeaderSize + 100;
  c.pool_buffers = 4;
  return c;
}

// Client sends one call; server replies with reply_len bytes; run to quiescence.
struct Exchange {
  bool ok = false;
  std::vector<std::byte> reply;
};

void call(Pair& p, size_t req_len, bool eo, size_t reply_len) {
  auto req = bytes_of(req_len, static_cast<uint8_t>(req_len));
  REQUIRE(p.client.send(req.data(), req.size(), true, eo, p.now) == Errc::kOk);
  if (!eo) return;
  const size_t before = count_complete(p.server_rx);
  REQUIRE(p.run_until([&] { return count_complete(p.server_rx) > before; }));
  auto reply = bytes_of(reply_len, 3);
  REQUIRE(p.server.send(reply.data(), reply.size(), true, true, p.now) == Errc::kOk);
  const size_t cbefore = count_complete(p.client_rx);
  REQUIRE(p.run_until([&] { return count_complete(p.client_rx) > cbefore; }));
  CHECK(p.client.state() == State::kIdle);
}

void finish(Pair& p) {
  REQUIRE(p.quiesce());
  CHECK(p.client.stats().buffers_held == 0);
  CHECK(p.server.stats().buffers_held == 0);
  CHECK(p.client.state() == State::kIdle);
  CHECK(p.server.state() == State::kIdle);
}
}  // namespace

TEST_CASE("drop the reply: client WaitingForReply times out, NACKs, server resends (client i, server iii)",
          "[otp][drop]") {
  Pair p(cfg());
  p.s2c.set_loss_mask(drop_type(PacketType::kComplete, 0));
  call(p, 50, true, 50);
  CHECK(joined(p.client_rx) == bytes_of(50, 3));
  CHECK(p.client.stats().nacks_sent >= 1);
  CHECK(p.server.stats().packets_retransmitted >= 1);
  CHECK(count_complete(p.server_rx) == 1);  // executed once
  finish(p);
}

TEST_CASE("drop the NACK: client times out again and NACKs again", "[otp][drop]") {
  Pair p(cfg());
  p.s2c.set_loss_mask(drop_type(PacketType::kComplete, 0));
  p.c2s.set_loss_mask(drop_type(PacketType::kNack, 0));
  call(p, 50, true, 50);
  CHECK(p.client.stats().nacks_sent >= 2);
  CHECK(count_complete(p.server_rx) == 1);
  finish(p);
}

TEST_CASE("drop the first packet of an exactly-once call: server NACKs (vii), executes once", "[otp][drop]") {
  Pair p(cfg());
  call(p, 10, true, 10);
  p.c2s.set_loss_mask(drop_nth(1));  // call 2, packet 0
  call(p, 350, true, 10);
  CHECK(p.server.stats().nacks_sent >= 1);
  CHECK(count_complete(p.server_rx) == 2);
  CHECK(joined(p.server_rx) == [] {
    auto a = bytes_of(10, 10);
    auto b = bytes_of(350, static_cast<uint8_t>(350));
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }());
  finish(p);
}

TEST_CASE("drop a whole single-packet exactly-once call: client NACK, server acks previous + NACKs (iv)",
          "[otp][drop]") {
  Pair p(cfg());
  call(p, 10, true, 10);
  p.c2s.set_loss_mask(drop_nth(1));
  call(p, 20, true, 10);
  CHECK(p.server.stats().nacks_sent == 1);
  CHECK(count_complete(p.server_rx) == 2);
  finish(p);
}

TEST_CASE("drop a middle fragment of a request: server NACKs (v), request intact", "[otp][drop]") {
  Pair p(cfg());
  p.c2s.set_loss_mask(drop_nth(2));
  call(p, 500, true, 10);
  CHECK(joined(p.server_rx) == bytes_of(500, static_cast<uint8_t>(500)));
  CHECK(p.server.stats().nacks_sent >= 1);
  finish(p);
}

TEST_CASE("drop a middle fragment of a reply: client NACKs (client i), reply intact", "[otp][drop]") {
  Pair p(cfg());
  p.s2c.set_loss_mask(drop_nth(1));
  call(p, 10, true, 350);
  CHECK(joined(p.client_rx) == bytes_of(350, 3));
  CHECK(p.client.stats().nacks_sent >= 1);
  finish(p);
}

TEST_CASE("drop a middle fragment of a one-way: server delivers ABORT (v)", "[otp][drop]") {
  Pair p(cfg());
  p.c2s.set_loss_mask(drop_nth(1));
  call(p, 350, false, 0);
  call(p, 10, true, 10);
  CHECK(count(p.server_rx, Delivery::kAbort) == 1);
  CHECK(p.server.stats().oneways_aborted == 1);
  CHECK(p.client.stats().packets_retransmitted == 0);  // one-ways are never retransmitted
  finish(p);
}

TEST_CASE("drop the start of a one-way: server ignores the call, no ABORT (vii)", "[otp][drop]") {
  Pair p(cfg());
  p.c2s.set_loss_mask(drop_nth(0));
  call(p, 350, false, 0);
  call(p, 10, true, 10);
  CHECK(count(p.server_rx, Delivery::kAbort) == 0);
  CHECK(p.server.stats().oneways_ignored == 1);
  CHECK(count_complete(p.server_rx) == 1);
  finish(p);
}

TEST_CASE("drop a whole one-way: next call is out of step and proceeds (vi)", "[otp][drop]") {
  Pair p(cfg());
  call(p, 10, true, 10);
  p.c2s.set_loss_mask(drop_nth(1));
  call(p, 10, false, 0);
  call(p, 10, true, 10);
  CHECK(count_complete(p.server_rx) == 2);
  CHECK(p.server.stats().nacks_sent == 0);
  finish(p);
}

TEST_CASE("drop the CALL_ACK: server retransmits the reply (i), idle client acks again", "[otp][drop]") {
  Pair p(cfg());
  p.c2s.set_loss_mask(drop_type(PacketType::kCallAck, 0));
  call(p, 10, true, 10);
  finish(p);
  CHECK(p.client.stats().call_acks_sent == 2);
  CHECK(p.server.stats().packets_retransmitted >= 1);
  CHECK(count_complete(p.client_rx) == 1);  // the retransmitted reply is not delivered again
}

TEST_CASE("drop the RECLAIM and the RECLAIM_ACK: sender resends RECLAIM, data intact", "[otp][drop][reclaim]") {
  Pair p(cfg());
  p.c2s.set_loss_mask(drop_type(PacketType::kReclaim, 0));
  p.s2c.set_loss_mask(drop_type(PacketType::kReclaimAck, 0));
  call(p, 1000, true, 1000);  // 10 packets each way, pool of 4
  CHECK(joined(p.server_rx) == bytes_of(1000, static_cast<uint8_t>(1000)));
  CHECK(joined(p.client_rx) == bytes_of(1000, 3));
  CHECK(p.client.stats().reclaims_sent >= 3);
  CHECK(p.server.stats().reclaims_sent >= 2);
  finish(p);
}

TEST_CASE("drop every reply packet: client retries then goes Zombie with BAD (client iii)", "[otp][drop]") {
  EngineConfig c = cfg();
  c.max_retries = 5;
  Pair p(c);
  p.s2c.set_loss_mask([](uint64_t, const std::byte*, size_t) { return true; });
  auto req = bytes_of(10, 1);
  REQUIRE(p.client.send(req.data(), req.size(), true, true, 0) == Errc::kOk);
  REQUIRE(p.run_until([&] { return p.client.state() == State::kZombie; }));
  CHECK(count(p.client_rx, Delivery::kBad) == 1);
  CHECK(p.client.stats().nacks_sent == 5);
  CHECK(count_complete(p.server_rx) == 1);
}

TEST_CASE("pkt_seq wraps 255 -> 0 inside one large call", "[otp][drop]") {
  EngineConfig c = cfg();
  c.pool_buffers = 32;
  Pair p(c);
  p.c2s.set_loss_mask(drop_indices({100, 262, 263}));
  call(p, 40'000, true, 30'000);  // 400 and 300 packets
  CHECK(joined(p.server_rx) == bytes_of(40'000, static_cast<uint8_t>(40'000)));
  CHECK(joined(p.client_rx) == bytes_of(30'000, 3));
  finish(p);
}

}  // namespace otp::test
