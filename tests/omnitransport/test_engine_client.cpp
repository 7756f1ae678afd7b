// Client machine: one hand-built packet (or timer, or send) into one engine,
// then check what it queued and its new state. Names: state + event.
#include <catch2/catch.hpp>

#include "wire.hpp"

namespace otp::test {

namespace {
constexpr uint64_t kUs = 1'000;
constexpr uint64_t kMs = 1'000'000;
EngineConfig small_cfg() {
  EngineConfig c;
  c.mtu = kHeaderSize + 100;
  c.pool_buffers = 4;
  c.max_retries = 3;
  return c;
}
// A client that has sent exactly-once call 1 of n packets and waits for the reply.
Engine waiting_client(size_t n_packets = 1) {
  Engine e(Role::kClient, small_cfg());
  auto req = std::vector<std::byte>(100 * n_packets);
  REQUIRE(e.send(req.data(), req.size(), true, true, 0) == Errc::kOk);
  REQUIRE(e.state() == State::kWaitingForReply);
  sent(e);
  return e;
}
}  // namespace

TEST_CASE("client Idle on send(complete, exactly-once) sends COMPLETE and waits for reply", "[otp][client]") {
  Engine e(Role::kClient, small_cfg());
  CHECK(e.state() == State::kIdle);
  const char msg[] = "hello";
  REQUIRE(e.send(msg, 5, true, true, 0) == Errc::kOk);
  auto out = sent(e);
  REQUIRE(out.size() == 1);
  CHECK(out[0].type == PacketType::kComplete);
  CHECK(out[0].exactly_once);
  CHECK(out[0].call_seq == 1);
  CHECK(out[0].pkt_seq == 0);
  CHECK(out[0].size == kHeaderSize + 5);
  CHECK_FALSE(out[0].fragmented);
  CHECK(e.state() == State::kWaitingForReply);
  CHECK(e.stats().buffers_held == 1);
  CHECK(e.next_timer() == 2 * kMs);
}

TEST_CASE("client Idle on send(partial) enters RequestInProgress, fragments to the MTU", "[otp][client]") {
  Engine e(Role::kClient, small_cfg());
  std::vector<std::byte> big(250);
  REQUIRE(e.send(big.data(), big.size(), false, true, 0) == Errc::kOk);
  CHECK(e.state() == State::kRequestInProgress);
  auto out = sent(e);
  REQUIRE(out.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(out[i].type == PacketType::kPartial);
    CHECK(out[i].pkt_seq == i);
    CHECK(out[i].fragmented);
  }
  CHECK(out[2].size == kHeaderSize + 50);
  CHECK(e.send(big.data(), 1, true, false, 0) == Errc::kWrongState);  // kind is fixed by the first chunk
  REQUIRE(e.send(big.data(), 10, true, true, 0) == Errc::kOk);
  out = sent(e);
  REQUIRE(out.size() == 1);
  CHECK(out[0].type == PacketType::kComplete);
  CHECK(out[0].pkt_seq == 3);
  CHECK(e.state() == State::kWaitingForReply);
}

TEST_CASE("client Idle on one-way send stays Idle and holds nothing", "[otp][client]") {
  Engine e(Role::kClient, small_cfg());
  std::vector<std::byte> d(150);
  REQUIRE(e.send(d.data(), d.size(), false, false, 0) == Errc::kOk);
  CHECK(e.state() == State::kOneWayInProgress);
  REQUIRE(e.send(d.data(), 1, true, false, 0) == Errc::kOk);
  CHECK(e.state() == State::kIdle);
  auto out = sent(e);
  REQUIRE(out.size() == 3);
  CHECK_FALSE(out[2].exactly_once);
  CHECK(out[2].type == PacketType::kComplete);
  CHECK(e.stats().buffers_held == 0);
  CHECK_FALSE(e.next_timer());
}

TEST_CASE("client WaitingForReply on send is refused", "[otp][client]") {
  Engine e = waiting_client();
  CHECK(e.send("x", 1, true, true, 0) == Errc::kWrongState);
}

TEST_CASE("client WaitingForReply on timeout sends NACK", "[otp][client]") {
  Engine e = waiting_client();
  e.on_timer(2 * kMs);
  auto out = sent(e);
  REQUIRE(out.size() == 1);
  CHECK(out[0].type == PacketType::kNack);
  CHECK(out[0].call_seq == 1);
  CHECK(out[0].pkt_seq == 0);
  CHECK(e.state() == State::kWaitingForReply);
  CHECK(e.next_timer() == 4 * kMs);
}

TEST_CASE("client WaitingForReply on repeated timeouts backs off: rto, rto, 2 rto ... up to rto_max", "[otp][client]") {
  EngineConfig c = small_cfg();
  c.max_retries = 100;
  c.rto_max_ns = 8 * kMs;
  Engine e(Role::kClient, c);
  REQUIRE(e.send("x", 1, true, true, 0) == Errc::kOk);
  sent(e);
  std::vector<uint64_t> gaps;
  uint64_t at = 0;
  for (int i = 0; i < 6; ++i) {
    const uint64_t due = *e.next_timer();
    gaps.push_back(due - at);
    at = due;
    e.on_timer(due);
    auto out = sent(e);
    REQUIRE(out.size() == 1);
    CHECK(out[0].type == PacketType::kNack);
  }
  CHECK(gaps == std::vector<uint64_t>{2 * kMs, 2 * kMs, 4 * kMs, 8 * kMs, 8 * kMs, 8 * kMs});
  CHECK(e.stats().timeouts == 6);
}

TEST_CASE("client WaitingForReply on reply packet after timeouts is back to rto", "[otp][client]") {
  EngineConfig c = small_cfg();
  c.max_retries = 100;
  Engine e(Role::kClient, c);
  std::vector<std::byte> req(100);
  REQUIRE(e.send(req.data(), req.size(), true, true, 0) == Errc::kOk);
  sent(e);
  for (int i = 0; i < 4; ++i) e.on_timer(*e.next_timer());  // the next gap is 16 ms
  const uint64_t now = *e.next_timer() - kMs;
  feed(e, pkt(PacketType::kPartial, 1, 0, true, 10), now);  // progress
  CHECK(e.next_timer() == now + 2 * kMs);
}

TEST_CASE("client WaitingForReply on CALL_ACK after timeouts keeps the backoff, restarts the give-up count",
          "[otp][client]") {
  EngineConfig c = small_cfg();  // max_retries 3
  Engine e(Role::kClient, c);
  REQUIRE(e.send("x", 1, true, true, 0) == Errc::kOk);
  sent(e);
  for (int i = 0; i < 3; ++i) e.on_timer(*e.next_timer());  // at 2, 4, 8 ms: the next gap is 8 ms
  const uint64_t now = *e.next_timer() - kMs;
  feed(e, pkt(PacketType::kCallAck, 1, 0), now);  // the server is working on it
  CHECK(e.next_timer() == now + 8 * kMs);
  for (int i = 0; i < 3; ++i) e.on_timer(*e.next_timer());
  CHECK(e.state() == State::kWaitingForReply);  // 3 more timeouts: not yet beyond max_retries
  e.on_timer(*e.next_timer());
  CHECK(e.state() == State::kZombie);
}

TEST_CASE("client WaitingForReply on out-of-sequence reply sends NACK from the missing packet", "[otp][client]") {
  Engine e = waiting_client();
  feed(e, pkt(PacketType::kPartial, 1, 0, true, 10));
  feed(e, pkt(PacketType::kPartial, 1, 2, true, 10));
  feed(e, pkt(PacketType::kPartial, 1, 3, true, 10));  // same gap: no second NACK
  auto out = sent(e);
  REQUIRE(out.size() == 1);
  CHECK(out[0].type == PacketType::kNack);
  CHECK(out[0].pkt_seq == 1);
  CHECK(received(e).size() == 1);
  CHECK(e.stats().buffers_held == 0);  // a reply packet acknowledges the request
}

TEST_CASE("client WaitingForReply on NACK retransmits held buffers from the nacked packet", "[otp][client]") {
  Engine e = waiting_client(3);
  feed(e, pkt(PacketType::kNack, 1, 1));
  auto out = sent(e);
  REQUIRE(out.size() == 2);
  CHECK(out[0].pkt_seq == 1);
  CHECK(out[1].pkt_seq == 2);
  CHECK(out[1].type == PacketType::kComplete);
  CHECK(e.stats().buffers_held == 2);  // packet 0 acknowledged by the NACK
  CHECK(e.stats().packets_retransmitted == 2);
  feed(e, pkt(PacketType::kNack, 0, 0));  // another call: stray
  CHECK(sent(e).empty());
}

TEST_CASE("client WaitingForReply on COMPLETE reply goes Idle, idle ack timer sends CALL_ACK", "[otp][client]") {
  Engine e = waiting_client();
  feed(e, pkt(PacketType::kComplete, 1, 0, true, 7), kMs);
  CHECK(e.state() == State::kIdle);
  auto rx = received(e);
  REQUIRE(rx.size() == 1);
  CHECK(rx[0].what == Delivery::kData);
  CHECK(rx[0].complete);
  CHECK(rx[0].data.size() == 7);
  CHECK(e.stats().buffers_held == 0);
  REQUIRE(e.next_timer() == 11 * kMs);
  e.on_timer(11 * kMs);
  auto out = sent(e);
  REQUIRE(out.size() == 1);
  CHECK(out[0].type == PacketType::kCallAck);
  CHECK(out[0].call_seq == 1);
  CHECK_FALSE(e.next_timer());
}

TEST_CASE("client Idle on next call cancels the ack timer (implicit ack)", "[otp][client]") {
  Engine e = waiting_client();
  feed(e, pkt(PacketType::kComplete, 1, 0, true, 7), kMs);
  REQUIRE(e.send("y", 1, true, true, 2 * kMs) == Errc::kOk);
  auto out = sent(e);
  REQUIRE(out.size() == 1);
  CHECK(out[0].call_seq == 2);
  e.on_timer(11 * kMs);  // the retransmission timer, not an ack
  out = sent(e);
  REQUIRE(out.size() == 1);
  CHECK(out[0].type == PacketType::kNack);
}

TEST_CASE("client Idle on repeated reply sends CALL_ACK again", "[otp][client]") {
  Engine e = waiting_client();
  feed(e, pkt(PacketType::kComplete, 1, 0, true, 7), kMs);
  received(e);
  feed(e, pkt(PacketType::kComplete, 1, 0, true, 7), 20 * kMs);
  auto out = sent(e);
  REQUIRE(out.size() == 1);
  CHECK(out[0].type == PacketType::kCallAck);
  CHECK(received(e).empty());  // never delivered twice
  CHECK(e.stats().duplicates == 1);
}

TEST_CASE("client WaitingForReply on CALL_ACK frees the request and keeps waiting", "[otp][client]") {
  Engine e = waiting_client(2);
  feed(e, pkt(PacketType::kCallAck, 1, 0), kMs);
  CHECK(e.stats().buffers_held == 0);
  CHECK(e.state() == State::kWaitingForReply);
  CHECK(e.next_timer() == 3 * kMs);
}

TEST_CASE("client WaitingForReply on RECLAIM sends RECLAIM_ACK with the next expected packet", "[otp][client]") {
  Engine e = waiting_client();
  feed(e, pkt(PacketType::kPartial, 1, 0, true, 10));
  feed(e, pkt(PacketType::kPartial, 1, 1, true, 10));
  feed(e, pkt(PacketType::kReclaim, 1, 0));
  auto out = sent(e);
  REQUIRE(out.size() == 1);
  CHECK(out[0].type == PacketType::kReclaimAck);
  CHECK(out[0].pkt_seq == 2);
}

TEST_CASE("client RequestInProgress on pool exhausted sends RECLAIM, RECLAIM_ACK frees and continues",
          "[otp][client][reclaim]") {
  Engine e(Role::kClient, small_cfg());  // pool of 4
  std::vector<std::byte> big(600);       // 6 packets
  REQUIRE(e.send(big.data(), big.size(), false, true, 0) == Errc::kOk);
  auto out = sent(e);
  REQUIRE(out.size() == 5);
  CHECK(out[3].pkt_seq == 3);
  CHECK(out[4].type == PacketType::kReclaim);
  CHECK(e.stats().buffers_held == 6);
  REQUIRE(e.next_timer() == 2 * kMs);
  e.on_timer(2 * kMs);  // RECLAIM lost: resent
  out = sent(e);
  REQUIRE(out.size() == 1);
  CHECK(out[0].type == PacketType::kReclaim);
  feed(e, pkt(PacketType::kReclaimAck, 1, 4), 3 * kMs);
  out = sent(e);
  REQUIRE(out.size() == 2);
  CHECK(out[0].pkt_seq == 4);
  CHECK(out[1].pkt_seq == 5);
  CHECK(e.stats().buffers_held == 2);
  CHECK_FALSE(e.next_timer());
  CHECK(e.reclaim(4 * kMs) == Errc::kOk);  // explicit reclaim
  out = sent(e);
  REQUIRE(out.size() == 1);
  CHECK(out[0].type == PacketType::kReclaim);
}

TEST_CASE("client WaitingForReply on max_retries timeouts goes Zombie with BAD", "[otp][client]") {
  Engine e = waiting_client();
  for (int i = 0; i < 10 && e.next_timer(); ++i) e.on_timer(*e.next_timer());
  CHECK(e.state() == State::kZombie);
  auto rx = received(e);
  REQUIRE(rx.size() == 1);
  CHECK(rx[0].what == Delivery::kBad);
  CHECK(e.stats().nacks_sent == 3);
  CHECK(e.stats().buffers_held == 0);
  CHECK(e.send("x", 1, true, true, 0) == Errc::kZombie);
  CHECK(e.reclaim(0) == Errc::kZombie);
  CHECK_FALSE(e.next_timer());
}

TEST_CASE("client any state on fail() goes Zombie with BAD, close() gives EOF", "[otp][client]") {
  Engine e = waiting_client();
  e.fail(0);
  CHECK(e.state() == State::kZombie);
  CHECK(received(e).at(0).what == Delivery::kBad);
  Engine f(Role::kClient);
  f.close(0);
  CHECK(received(f).at(0).what == Delivery::kEof);
  CHECK(f.send("x", 1, true, true, 0) == Errc::kZombie);
}

TEST_CASE("client WaitingForReply on reply for a newer call counts it stray", "[otp][client]") {
  Engine e = waiting_client();
  feed(e, pkt(PacketType::kComplete, 9, 0, true, 1));
  CHECK(received(e).empty());
  CHECK(e.stats().stray == 1);
  CHECK(e.state() == State::kWaitingForReply);
}

namespace {
// Makes `calls` exactly-once calls on `e` from `start`, each answered by a
// one-packet reply `reply_after(i)` after its request; timers that fall due
// before a reply run first (as a driver would). Returns when the last ended.
template <class ReplyAfter>
uint64_t make_calls(Engine& e, int calls, uint64_t start, ReplyAfter reply_after) {
  uint64_t now = start;
  for (int i = 0; i < calls; ++i) {
    REQUIRE(e.send("x", 1, true, true, now) == Errc::kOk);
    const uint64_t reply_at = now + reply_after(i);
    while (e.next_timer() && *e.next_timer() < reply_at) e.on_timer(*e.next_timer());
    feed(e, pkt(PacketType::kComplete, e.stats().calls & 0xff, 0, true, 1), reply_at);
    REQUIRE(e.state() == State::kIdle);
    received(e);
    now = reply_at;
  }
  return now;
}
}  // namespace

TEST_CASE("client whose replies come later than rto stops timing out: the RTO adapts to its round trips",
          "[otp][client][rto]") {
  // A busy server answers every call in 2.5 to 3.5 ms, later than the 2 ms
  // rto, though nothing is lost. A fixed RTO would NACK every call (and the
  // server resend every reply); the adapted one only the first.
  EngineConfig c = small_cfg();
  c.max_retries = 100;
  Engine e(Role::kClient, c);
  make_calls(e, 40, 0, [](int i) { return i % 2 ? 2500 * kUs : 3500 * kUs; });
  sent(e);
  CHECK(e.stats().timeouts == 1);
  CHECK(e.stats().nacks_sent == 1);
  CHECK(e.rto_ns() > 3500 * kUs);
  CHECK(e.rto_ns() <= c.rto_max_ns);
}

TEST_CASE("client after slow calls, quick ones bring the RTO back: a lost reply is NACKed one rto after the request",
          "[otp][client][rto]") {
  EngineConfig c = small_cfg();
  c.max_retries = 100;
  Engine e(Role::kClient, c);
  uint64_t now = make_calls(e, 20, 0, [](int) { return 5 * kMs; });
  CHECK(e.rto_ns() > 5 * kMs);
  now = make_calls(e, 60, now, [](int) { return 3 * kUs; });
  CHECK(e.rto_ns() == 2 * kMs);
  sent(e);
  REQUIRE(e.send("x", 1, true, true, now) == Errc::kOk);  // its reply is lost
  CHECK(e.next_timer() == now + 2 * kMs);
  e.on_timer(now + 2 * kMs);
  auto out = sent(e);
  REQUIRE(out.size() == 2);
  CHECK(out[1].type == PacketType::kNack);
}

TEST_CASE("client a call that needed a timeout: the next one starts from twice the RTO (Karn)", "[otp][client][rto]") {
  EngineConfig c = small_cfg();
  c.max_retries = 100;
  Engine e(Role::kClient, c);
  const uint64_t now = make_calls(e, 1, 0, [](int) { return 2500 * kUs; });  // NACKed at 2 ms, then answered
  CHECK(e.stats().timeouts == 1);
  REQUIRE(e.send("x", 1, true, true, now) == Errc::kOk);
  CHECK(e.next_timer() == now + 4 * kMs);
}

}  // namespace otp::test
