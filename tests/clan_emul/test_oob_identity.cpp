// Tests of the out-of-band connection manager: node identity: tokens, forged
// frames, restarted nodes. The multi-process scheme and the helpers:
// oob_test_support.hpp.
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "clan_emul/oob_manager.hpp"
#include "clan_emul/oob_wire.hpp"
#include "clan_emul/siphash.hpp"
#include "oob_test_support.hpp"

using namespace clan;
using namespace clan::oob_test;
using namespace std::chrono_literals;

TEST_CASE("oob: a forged REJECT naming a node whose request waits to be accepted introduces nobody",
          "[oob]") {
  using namespace oob_wire;
  TempDir dir;
  Child cli([&](Child& self) {
    auto m = OobManager::start(config(dir, "cli"));
    CHILD_CHECK(m.ok());
    CHILD_CHECK(self.heard(Deadline::after(60s)) == "listening");
    auto c = (*m)->connect("srv", 7, {}, Deadline::after(30s));
    CHILD_CHECK(c.ok());
    self.tell("connected");
    CHILD_CHECK(self.heard(Deadline::after(60s)) == "done");
    return 0;
  });
  auto mgr = OobManager::start(config(dir, "srv"));
  REQUIRE(mgr.ok());
  auto l = (*mgr)->listen(7);
  REQUIRE(l.ok());
  cli.say("listening");
  auto r = (*l)->next_request(Deadline::after(20s));
  REQUIRE(r.ok());

  // While the request waits, a raw socket claims that "cli" restarted and
  // answers a connect srv never made.
  zmq::context_t ctx;
  zmq::socket_t raw(ctx, zmq::socket_type::dealer);
  raw.set(zmq::sockopt::linger, 1000);
  raw.connect("ipc://" + dir.path + "/srv.oob");
  Message rej;
  rej.hdr.type = MsgType::kReject;
  rej.hdr.node = "cli";
  rej.hdr.instance = 12345;
  rej.hdr.pid = ::getpid();
  rej.dst_conn = 999;
  raw.send(zmq::buffer(encode(rej)), zmq::send_flags::none);
  auto deadline = Deadline::after(20s);
  auto judged = [&] { return (*mgr)->stats().forged_dropped + (*mgr)->stats().unknown_dropped; };
  while (judged() < 1 && !deadline.expired()) std::this_thread::yield();
  CHECK((*mgr)->stats().forged_dropped == 1);

  // The real node's request is still its own.
  auto c = r->accept({});
  REQUIRE(c.ok());
  CHECK(cli.hear(Deadline::after(20s)) == "connected");
  cli.say("done");
  CHECK(cli.wait_exit(Deadline::after(20s)) == 0);
}

TEST_CASE("oob: a forged HEARTBEAT naming a connected node with a new instance is dropped and counted",
          "[oob]") {
  using namespace oob_wire;
  TempDir dir;
  // A hostile process of the same user: it reads node names from the runtime
  // directory and speaks to the server's socket with a raw DEALER.
  Child forger([&](Child& self) {
    auto victim = self.heard(Deadline::after(30s));
    CHILD_CHECK(victim.has_value());
    zmq::context_t ctx;
    zmq::socket_t raw(ctx, zmq::socket_type::dealer);
    raw.set(zmq::sockopt::linger, 1000);
    raw.connect("ipc://" + dir.path + "/srv.oob");
    Message hb;
    hb.hdr.type = MsgType::kHeartbeat;
    hb.hdr.node = "cli";
    hb.hdr.instance = 12345;  // "cli restarted"
    hb.hdr.pid = std::stoi(*victim);
    raw.send(zmq::buffer(encode(hb)), zmq::send_flags::none);
    Message dc;  // and a DISCONNECT of its first connection
    dc.hdr = hb.hdr;
    dc.hdr.type = MsgType::kDisconnect;
    dc.dst_conn = 1;
    dc.src_conn = 1;
    raw.send(zmq::buffer(encode(dc)), zmq::send_flags::none);
    self.tell("sent");
    self.heard(Deadline::after(60s));
    return 0;
  });
  Child cli([&](Child& self) {
    auto m = OobManager::start(config(dir, "cli"));
    CHILD_CHECK(m.ok());
    CHILD_CHECK(self.heard(Deadline::after(60s)) == "listening");
    auto c = (*m)->connect("srv", 7, {}, Deadline::after(20s));
    CHILD_CHECK(c.ok());
    self.tell("connected");
    CHILD_CHECK(self.heard(Deadline::after(60s)) == "again");
    CHILD_CHECK((*c)->state() == OobState::kConnected);
    auto c2 = (*m)->connect("srv", 7, {}, Deadline::after(20s));  // its calls go on
    CHILD_CHECK(c2.ok());
    CHILD_CHECK((*c)->disconnect() == Errc::kOk);
    self.tell("closed");
    CHILD_CHECK(self.heard(Deadline::after(60s)) == "done");
    return 0;
  });
  auto mgr = OobManager::start(config(dir, "srv"));
  REQUIRE(mgr.ok());
  auto l = (*mgr)->listen(7);
  REQUIRE(l.ok());
  cli.say("listening");
  auto r = (*l)->next_request(Deadline::after(20s));
  REQUIRE(r.ok());
  auto c = r->accept({});
  REQUIRE(c.ok());
  REQUIRE(cli.hear(Deadline::after(20s)) == "connected");

  forger.say(std::to_string(cli.pid()));
  REQUIRE(forger.hear(Deadline::after(20s)) == "sent");
  // Both frames are read and judged: the counter says when.
  auto deadline = Deadline::after(20s);
  while ((*mgr)->stats().forged_dropped < 2 && !deadline.expired()) std::this_thread::yield();
  CHECK((*mgr)->stats().forged_dropped == 2);
  CHECK((*c)->state() == OobState::kConnected);

  cli.say("again");
  auto r2 = (*l)->next_request(Deadline::after(20s));
  REQUIRE(r2.ok());
  CHECK(r2->accept({}).ok());
  REQUIRE(cli.hear(Deadline::after(20s)) == "closed");
  // The orderly DISCONNECT of the real node is believed.
  REQUIRE((*c)->wait_down(Deadline::after(20s)) == Errc::kOk);
  CHECK((*c)->state() == OobState::kClosed);
  cli.say("done");
  CHECK(cli.wait_exit(Deadline::after(20s)) == 0);
  forger.say("done");
  CHECK(forger.wait_exit(Deadline::after(20s)) == 0);
}

TEST_CASE("oob: a node restarted under the same name is recognised while its old connection is open",
          "[oob]") {
  TempDir dir;
  auto client = [&](Child& self) {
    CHILD_CHECK(self.heard(Deadline::after(30s)) == "go");
    auto m = OobManager::start(config(dir, "cli"));
    CHILD_CHECK(m.ok());
    auto c = (*m)->connect("srv", 7, {}, Deadline::after(20s));
    CHILD_CHECK(c.ok());
    self.tell("connected");
    self.heard(Deadline::after(60s));
    return 0;
  };
  // Both forked before this process starts its manager's thread.
  Child first(client);
  Child second(client);
  auto mgr = OobManager::start(config(dir, "srv"));
  REQUIRE(mgr.ok());
  auto l = (*mgr)->listen(7);
  REQUIRE(l.ok());
  first.say("go");
  auto r = (*l)->next_request(Deadline::after(20s));
  REQUIRE(r.ok());
  auto c = r->accept({});
  REQUIRE(c.ok());
  REQUIRE(first.hear(Deadline::after(20s)) == "connected");
  first.kill_and_reap();
  second.say("go");
  auto r2 = (*l)->next_request(Deadline::after(20s));
  REQUIRE(r2.ok());
  auto c2 = r2->accept({});
  REQUIRE(c2.ok());
  REQUIRE(second.hear(Deadline::after(20s)) == "connected");
  REQUIRE((*c)->wait_down(Deadline::after(20s)) == Errc::kOk);
  CHECK((*c)->state() == OobState::kPeerDead);
  CHECK((*c2)->state() == OobState::kConnected);
  CHECK((*mgr)->stats().forged_dropped == 0);
}

TEST_CASE("siphash: the reference test vectors", "[oob]") {
  SipKey key{};
  for (uint8_t i = 0; i < 16; ++i) key[i] = i;
  std::vector<std::byte> msg;
  CHECK(siphash24(key, msg) == 0x726fdb47dd0e0e31ull);
  for (uint8_t i = 0; i < 15; ++i) msg.push_back(std::byte{i});
  CHECK(siphash24(key, msg) == 0xa129ca6149be45e5ull);
}
