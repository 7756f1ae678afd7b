// Tests of the out-of-band connection manager: peer death and liveness: pidfds,
// silence, stopped peers. The multi-process scheme and the helpers:
// oob_test_support.hpp.
#include <catch2/catch.hpp>
#include <future>
#include <memory>
#include <optional>
#include <zmq.hpp>

#include "clan_emul/oob_manager.hpp"
#include "clan_emul/oob_wire.hpp"
#include "oob_test_support.hpp"

using namespace clan;
using namespace clan::oob_test;
using namespace std::chrono_literals;

TEST_CASE("oob: a peer killed with SIGKILL is reported kPeerDead", "[oob]") {
  TempDir dir;
  const bool server_dies = GENERATE(true, false);
  INFO((server_dies ? "the accepting side dies" : "the connecting side dies"));
  std::shared_ptr<OobConnection> conn;
  std::unique_ptr<OobManager> mgr;
  std::unique_ptr<OobListener> listener;
  std::optional<Child> child;
  if (server_dies) {
    child.emplace([&](Child& self) { return accepting_server(self, dir, "srv", 7, 1); });
    REQUIRE(child->hear(Deadline::after(20s)) == "ready");
    auto m = OobManager::start(config(dir, "cli"));
    REQUIRE(m.ok());
    mgr = std::move(m).value();
    auto c = mgr->connect("srv", 7, {}, Deadline::after(20s));
    REQUIRE(c.ok());
    conn = c.value();
  } else {
    child.emplace([&](Child& self) {
      CHILD_CHECK(self.heard(Deadline::after(20s)) == "go");
      auto m = OobManager::start(config(dir, "cli"));
      CHILD_CHECK(m.ok());
      auto c = (*m)->connect("srv", 7, {}, Deadline::after(20s));
      CHILD_CHECK(c.ok());
      self.tell("connected");
      self.heard(Deadline::after(60s));
      return 0;
    });
    auto m = OobManager::start(config(dir, "srv"));
    REQUIRE(m.ok());
    mgr = std::move(m).value();
    auto l = mgr->listen(7);
    REQUIRE(l.ok());
    listener = std::move(l).value();
    child->say("go");
    auto req = listener->next_request(Deadline::after(20s));
    REQUIRE(req.ok());
    auto c = req->accept({});
    REQUIRE(c.ok());
    conn = c.value();
    REQUIRE(child->hear(Deadline::after(20s)) == "connected");
  }
  DownProbe probe;
  conn->set_on_down(probe.fn());
  CHECK(conn->state() == OobState::kConnected);
  auto t0 = Clock::now();
  child->signal(SIGKILL);
  REQUIRE(conn->wait_down(Deadline::after(10s)) == Errc::kOk);
  double dt = ms_since(t0);
  CHECK(conn->state() == OobState::kPeerDead);
  REQUIRE(probe.wait(Deadline::after(10s)));
  CHECK(probe.state == OobState::kPeerDead);
  WARN("SIGKILLed peer reported dead after " << dt << " ms (peer_timeout 1000 ms, pidfd watch)");
  CHECK(conn->disconnect() == Errc::kPeerDead);
  child->wait_exit(Deadline::after(10s));
}

TEST_CASE("oob: a SIGSTOPped peer on this host is not declared dead however long its silence", "[oob]") {
  TempDir dir;
  constexpr auto kHb = 50ms;
  constexpr auto kTimeout = 300ms;
  Child child([&](Child& self) { return accepting_server(self, dir, "srv", 7, 1, kHb, kTimeout); });
  REQUIRE(child.hear(Deadline::after(20s)) == "ready");
  auto mgr = OobManager::start(config(dir, "cli", kHb, kTimeout));
  REQUIRE(mgr.ok());
  auto c = (*mgr)->connect("srv", 7, {}, Deadline::after(20s));
  REQUIRE(c.ok());
  REQUIRE(child.hear(Deadline::after(20s)) == "accepted");
  child.stop();
  // Silent for many peer timeouts: its pidfd says it lives, so it is waited for.
  CHECK((*c)->wait_down(Deadline::after(10 * kTimeout)) == Errc::kTimeout);
  CHECK((*c)->state() == OobState::kConnected);
  child.signal(SIGCONT);
  child.say("done");  // it leaves in order: we see kClosed, not kPeerDead
  REQUIRE((*c)->wait_down(Deadline::after(20s)) == Errc::kOk);
  CHECK((*c)->state() == OobState::kClosed);
  CHECK(child.wait_exit(Deadline::after(20s)) == 0);
}

TEST_CASE("oob: a peer whose pid cannot be watched is declared dead after peer_timeout of silence", "[oob]") {
  using namespace oob_wire;
  TempDir dir;
  constexpr auto kHb = 50ms;
  constexpr auto kTimeout = 300ms;
  auto mgr = OobManager::start(config(dir, "srv", kHb, kTimeout));
  REQUIRE(mgr.ok());
  auto l = (*mgr)->listen(7);
  REQUIRE(l.ok());
  // A node of another pid namespace, spoken by hand: one CONNECT_REQ, then silence.
  int lock = hold_node_lock(dir, "far");
  REQUIRE(lock >= 0);
  zmq::context_t ctx;
  zmq::socket_t raw(ctx, zmq::socket_type::dealer);
  raw.set(zmq::sockopt::linger, 0);
  raw.connect("ipc://" + dir.path + "/srv.oob");
  Message req;
  req.hdr.type = MsgType::kConnectReq;
  req.hdr.node = "far";
  req.hdr.instance = 99;
  req.hdr.pid = ::getpid();
  req.hdr.pid_ns = 1;  // not ours: its pid means nothing here
  req.src_conn = 1;
  req.port = 7;
  req.dst_node = "srv";
  raw.send(zmq::buffer(encode(req)), zmq::send_flags::none);
  auto r = (*l)->next_request(Deadline::after(20s));
  REQUIRE(r.ok());
  auto c = r->accept({});
  REQUIRE(c.ok());
  auto t0 = Clock::now();
  REQUIRE((*c)->wait_down(Deadline::after(20s)) == Errc::kOk);
  CHECK((*c)->state() == OobState::kPeerDead);
  CHECK(ms_since(t0) >= std::chrono::duration<double, std::milli>(kTimeout - 2 * kHb).count());
  ::close(lock);
}

TEST_CASE("oob: a peer dying while our connect is pending gives kPeerDead", "[oob]") {
  TempDir dir;
  Child child([&](Child& self) {
    auto mgr = OobManager::start(config(dir, "srv"));
    CHILD_CHECK(mgr.ok());
    auto l = (*mgr)->listen(7);
    CHILD_CHECK(l.ok());
    self.tell("ready");
    auto req = (*l)->next_request(Deadline::after(20s));
    CHILD_CHECK(req.ok());
    self.tell("got it");
    self.heard(Deadline::after(60s));  // never answers
    return 0;
  });
  REQUIRE(child.hear(Deadline::after(20s)) == "ready");
  auto mgr = OobManager::start(config(dir, "cli"));
  REQUIRE(mgr.ok());
  auto fut = std::async(std::launch::async,
                        [&] { return (*mgr)->connect("srv", 7, {}, Deadline::after(20s)); });
  REQUIRE(child.hear(Deadline::after(20s)) == "got it");
  auto t0 = Clock::now();
  child.signal(SIGKILL);
  REQUIRE(fut.wait_for(20s) == std::future_status::ready);
  CHECK(fut.get().error() == Errc::kPeerDead);
  WARN("pending connect failed " << ms_since(t0) << " ms after the peer's death");
}
