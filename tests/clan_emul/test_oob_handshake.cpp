// Tests of the out-of-band connection manager: ports, connect, accept, reject
// and disconnect. The multi-process scheme and the helpers:
// oob_test_support.hpp.
#include <catch2/catch.hpp>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "clan_emul/oob_manager.hpp"
#include "oob_test_support.hpp"

using namespace clan;
using namespace clan::oob_test;
using namespace std::chrono_literals;

TEST_CASE("oob: invalid node names and configs are kInvalidArgument", "[oob]") {
  TempDir dir;
  for (const std::string& bad : std::vector<std::string>{"", "a/b", "..", ".", "sp ace", std::string(65, 'x'), "t\tab"}) {
    INFO("name '" << bad << "'");
    CHECK(OobManager::start(config(dir, bad)).error() == Errc::kInvalidArgument);
  }
  CHECK(OobManager::start(config(dir, "ok", 100ms, 100ms)).error() == Errc::kInvalidArgument);
  auto m = OobManager::start(config(dir, "ok"));
  REQUIRE(m.ok());
  CHECK((*m)->node() == "ok");
  CHECK((*m)->connect("bad/name", 1, {}, Deadline::after(1s)).error() == Errc::kInvalidArgument);
  CHECK((*m)->connect("ok", 1, pattern(kOobMaxBlob + 1, 0), Deadline::after(1s)).error() ==
        Errc::kInvalidArgument);
}

TEST_CASE("oob: listen on a taken port is kAddressInUse, next_request times out, the port frees on destruction",
          "[oob]") {
  TempDir dir;
  auto m = OobManager::start(config(dir, "solo"));
  REQUIRE(m.ok());
  auto l = (*m)->listen(7);
  REQUIRE(l.ok());
  CHECK((*m)->listen(7).error() == Errc::kAddressInUse);
  auto t0 = Clock::now();
  CHECK((*l)->next_request(Deadline::after(50ms)).error() == Errc::kTimeout);
  CHECK(ms_since(t0) >= 45);
  l.value().reset();
  CHECK((*m)->listen(7).ok());
}

TEST_CASE("oob: a node can connect to itself", "[oob]") {
  TempDir dir;
  auto m = OobManager::start(config(dir, "self"));
  REQUIRE(m.ok());
  auto l = (*m)->listen(3);
  REQUIRE(l.ok());
  auto fut = std::async(std::launch::async, [&] {
    return (*m)->connect("self", 3, pattern(10, 1), Deadline::after(10s));
  });
  auto req = (*l)->next_request(Deadline::after(10s));
  REQUIRE(req.ok());
  CHECK(req->peer_blob() == pattern(10, 1));
  CHECK(req->peer_pid() == ::getpid());
  auto a = req->accept(pattern(20, 2));
  REQUIRE(a.ok());
  auto c = fut.get();
  REQUIRE(c.ok());
  CHECK((*c)->peer_blob() == pattern(20, 2));
  CHECK((*c)->peer_on_this_host());
  CHECK((*c)->disconnect() == Errc::kOk);
  CHECK((*a)->wait_down(Deadline::after(5s)) == Errc::kOk);
  CHECK((*a)->state() == OobState::kClosed);
}

TEST_CASE("oob: connect and accept exchange blobs both ways", "[oob]") {
  TempDir dir;
  Child child([&](Child& self) {
    auto mgr = OobManager::start(config(dir, "srv"));
    CHILD_CHECK(mgr.ok());
    auto l = (*mgr)->listen(7);
    CHILD_CHECK(l.ok());
    self.tell("ready");
    auto req = (*l)->next_request(Deadline::after(20s));
    CHILD_CHECK(req.ok());
    CHILD_CHECK(req->peer_blob() == pattern(1000, 1));
    CHILD_CHECK(req->peer_node() == "cli");
    CHILD_CHECK(req->peer_pid() == ::getppid());
    // Too large: refused without consuming the request.
    CHILD_CHECK(req->accept(pattern(kOobMaxBlob + 1, 0)).error() == Errc::kInvalidArgument);
    auto c = req->accept(pattern(kOobMaxBlob, 2));
    CHILD_CHECK(c.ok());
    CHILD_CHECK(req->accept({}).error() == Errc::kInvalidArgument);  // already answered
    CHILD_CHECK((*c)->peer_blob() == pattern(1000, 1));
    CHILD_CHECK((*c)->peer_node() == "cli");
    CHILD_CHECK((*c)->peer_pid() == ::getppid());
    CHILD_CHECK((*c)->peer_on_this_host());
    CHILD_CHECK((*c)->wait_down(Deadline::after(20s)) == Errc::kOk);
    CHILD_CHECK((*c)->state() == OobState::kClosed);
    return 0;
  });
  REQUIRE(child.hear(Deadline::after(20s)) == "ready");
  auto mgr = OobManager::start(config(dir, "cli"));
  REQUIRE(mgr.ok());
  auto c = (*mgr)->connect("srv", 7, pattern(1000, 1), Deadline::after(20s));
  REQUIRE(c.ok());
  CHECK((*c)->peer_blob() == pattern(kOobMaxBlob, 2));
  CHECK((*c)->peer_node() == "srv");
  CHECK((*c)->peer_pid() == child.pid());
  CHECK((*c)->peer_on_this_host());
  CHECK((*c)->state() == OobState::kConnected);
  CHECK((*c)->disconnect() == Errc::kOk);
  CHECK((*c)->state() == OobState::kLocalClosed);
  CHECK((*c)->disconnect() == Errc::kClosed);
  CHECK(child.wait_exit(Deadline::after(20s)) == 0);
}

TEST_CASE("oob: a rejected or dropped request makes connect return kRefused", "[oob]") {
  TempDir dir;
  Child child([&](Child& self) {
    auto mgr = OobManager::start(config(dir, "srv"));
    CHILD_CHECK(mgr.ok());
    auto l = (*mgr)->listen(7);
    CHILD_CHECK(l.ok());
    self.tell("ready");
    auto r1 = (*l)->next_request(Deadline::after(20s));
    CHILD_CHECK(r1.ok());
    r1->reject();
    {
      auto r2 = (*l)->next_request(Deadline::after(20s));
      CHILD_CHECK(r2.ok());
    }  // destroyed unanswered: rejected
    auto done = self.heard(Deadline::after(20s));
    CHILD_CHECK(done == "done");
    return 0;
  });
  REQUIRE(child.hear(Deadline::after(20s)) == "ready");
  auto mgr = OobManager::start(config(dir, "cli"));
  REQUIRE(mgr.ok());
  CHECK((*mgr)->connect("srv", 7, {}, Deadline::after(20s)).error() == Errc::kRefused);
  CHECK((*mgr)->connect("srv", 7, {}, Deadline::after(20s)).error() == Errc::kRefused);
  child.say("done");
  CHECK(child.wait_exit(Deadline::after(20s)) == 0);
}

TEST_CASE("oob: connect to a node nobody holds is refused at once, even with stale files", "[oob]") {
  TempDir dir;
  Child ghost([&](Child& self) {
    auto mgr = OobManager::start(config(dir, "ghost"));
    CHILD_CHECK(mgr.ok());
    self.tell("ready");
    self.heard(Deadline::after(60s));
    return 0;
  });
  REQUIRE(ghost.hear(Deadline::after(20s)) == "ready");
  ghost.kill_and_reap();
  // SIGKILL left the files behind: only the lock says the node is dead.
  CHECK(dir.has("ghost.lock"));
  CHECK(dir.has("ghost.oob"));

  auto mgr = OobManager::start(config(dir, "cli"));
  REQUIRE(mgr.ok());
  for (const char* node : {"nobody", "ghost"}) {
    INFO(node);
    auto t0 = Clock::now();
    CHECK((*mgr)->connect(node, 1, {}, Deadline::after(20s)).error() == Errc::kRefused);
    WARN("refused in " << ms_since(t0) << " ms");
    CHECK(ms_since(t0) < 10'000);  // far from the deadline: no waiting involved
  }
}

TEST_CASE("oob: connect to a port nobody listens on is refused", "[oob]") {
  TempDir dir;
  Child child([&](Child& self) {
    auto mgr = OobManager::start(config(dir, "srv"));
    CHILD_CHECK(mgr.ok());
    auto l = (*mgr)->listen(7);
    CHILD_CHECK(l.ok());
    self.tell("ready");
    CHILD_CHECK(self.heard(Deadline::after(20s)) == "done");
    return 0;
  });
  REQUIRE(child.hear(Deadline::after(20s)) == "ready");
  auto mgr = OobManager::start(config(dir, "cli"));
  REQUIRE(mgr.ok());
  CHECK((*mgr)->connect("srv", 8, {}, Deadline::after(20s)).error() == Errc::kRefused);
  child.say("done");
  CHECK(child.wait_exit(Deadline::after(20s)) == 0);
}

TEST_CASE("oob: connect to a peer that never answers times out at the deadline", "[oob]") {
  TempDir dir;
  bool stop_it = GENERATE(true, false);
  INFO((stop_it ? "peer SIGSTOPped" : "peer listening but never taking requests"));
  Child child([&](Child& self) {
    auto mgr = OobManager::start(config(dir, "srv"));
    CHILD_CHECK(mgr.ok());
    auto l = (*mgr)->listen(7);
    CHILD_CHECK(l.ok());
    self.tell("ready");
    self.heard(Deadline::after(60s));
    return 0;
  });
  REQUIRE(child.hear(Deadline::after(20s)) == "ready");
  if (stop_it) child.stop();
  auto mgr = OobManager::start(config(dir, "cli"));
  REQUIRE(mgr.ok());
  auto t0 = Clock::now();
  CHECK((*mgr)->connect("srv", 7, {}, Deadline::after(300ms)).error() == Errc::kTimeout);
  CHECK(ms_since(t0) >= 295);
  WARN("timed out after " << ms_since(t0) << " ms (deadline 300 ms)");
}

TEST_CASE("oob: orderly disconnect: the peer sees kClosed and on_down fires once", "[oob]") {
  TempDir dir;
  Child child([&](Child& self) {
    auto mgr = OobManager::start(config(dir, "srv"));
    CHILD_CHECK(mgr.ok());
    auto l = (*mgr)->listen(7);
    CHILD_CHECK(l.ok());
    self.tell("ready");
    auto req = (*l)->next_request(Deadline::after(20s));
    CHILD_CHECK(req.ok());
    auto c = req->accept({});
    CHILD_CHECK(c.ok());
    DownProbe probe;
    (*c)->set_on_down(probe.fn());
    CHILD_CHECK(self.heard(Deadline::after(20s)) == "armed");  // the parent's on_down is set
    CHILD_CHECK((*c)->disconnect() == Errc::kOk);
    CHILD_CHECK((*c)->state() == OobState::kLocalClosed);
    CHILD_CHECK(probe.wait(Deadline::after(20s)));
    CHILD_CHECK(probe.state == OobState::kLocalClosed);
    CHILD_CHECK(self.heard(Deadline::after(20s)) == "done");
    mgr.value().reset();
    CHILD_CHECK(probe.count() == 1);
    return 0;
  });
  REQUIRE(child.hear(Deadline::after(20s)) == "ready");
  auto mgr = OobManager::start(config(dir, "cli"));
  REQUIRE(mgr.ok());
  auto c = (*mgr)->connect("srv", 7, {}, Deadline::after(20s));
  REQUIRE(c.ok());
  DownProbe probe;
  (*c)->set_on_down(probe.fn());
  child.say("armed");
  REQUIRE((*c)->wait_down(Deadline::after(20s)) == Errc::kOk);
  CHECK((*c)->state() == OobState::kClosed);
  REQUIRE(probe.wait(Deadline::after(20s)));
  CHECK(probe.thread != std::this_thread::get_id());  // the manager thread
  child.say("done");
  CHECK(child.wait_exit(Deadline::after(20s)) == 0);
  mgr.value().reset();  // nothing may call it again, not even the manager's shutdown
  CHECK(probe.count() == 1);
  CHECK(probe.state == OobState::kClosed);
  // Set after the fact: called at once, here.
  DownProbe late;
  (*c)->set_on_down(late.fn());
  CHECK(late.count() == 1);
  CHECK(late.thread == std::this_thread::get_id());
  CHECK(late.state == OobState::kClosed);
  CHECK((*c)->disconnect() == Errc::kClosed);
}

TEST_CASE("oob: destroying a manager with open connections closes them for the peer", "[oob]") {
  TempDir dir;
  constexpr int kConns = 5;
  Child child([&](Child& self) {
    auto mgr = OobManager::start(config(dir, "srv"));
    CHILD_CHECK(mgr.ok());
    auto l = (*mgr)->listen(7);
    CHILD_CHECK(l.ok());
    self.tell("ready");
    std::vector<std::shared_ptr<OobConnection>> conns;
    std::vector<std::unique_ptr<DownProbe>> probes;
    for (int i = 0; i < kConns; ++i) {
      auto req = (*l)->next_request(Deadline::after(20s));
      CHILD_CHECK(req.ok());
      auto c = req->accept({});
      CHILD_CHECK(c.ok());
      conns.push_back(c.value());
      probes.push_back(std::make_unique<DownProbe>());
      conns.back()->set_on_down(probes.back()->fn());
    }
    CHILD_CHECK(self.heard(Deadline::after(20s)) == "destroy");
    mgr.value().reset();
    for (int i = 0; i < kConns; ++i) {
      CHILD_CHECK(conns[i]->state() == OobState::kLocalClosed);
      CHILD_CHECK(probes[i]->count() == 1);
      CHILD_CHECK(probes[i]->state == OobState::kLocalClosed);
      CHILD_CHECK(conns[i]->disconnect() == Errc::kClosed);
    }
    CHILD_CHECK((*l)->next_request(Deadline::after(1s)).error() == Errc::kClosed);
    CHILD_CHECK(!dir.has("srv.lock") && !dir.has("srv.oob"));
    return 0;
  });
  REQUIRE(child.hear(Deadline::after(20s)) == "ready");
  auto mgr = OobManager::start(config(dir, "cli"));
  REQUIRE(mgr.ok());
  std::vector<std::shared_ptr<OobConnection>> conns;
  for (int i = 0; i < kConns; ++i) {
    auto c = (*mgr)->connect("srv", 7, {}, Deadline::after(20s));
    REQUIRE(c.ok());
    conns.push_back(c.value());
  }
  child.say("destroy");
  for (auto& c : conns) {
    REQUIRE(c->wait_down(Deadline::after(10s)) == Errc::kOk);
    CHECK(c->state() == OobState::kClosed);  // orderly, not kPeerDead
  }
  CHECK(child.wait_exit(Deadline::after(20s)) == 0);
  CHECK((*mgr)->connect("srv", 7, {}, Deadline::after(5s)).error() == Errc::kRefused);
}

TEST_CASE("oob: to_string names every state", "[oob]") {
  CHECK(std::string(to_string(OobState::kConnected)) == "connected");
  CHECK(std::string(to_string(OobState::kClosed)) == "closed by peer");
  CHECK(std::string(to_string(OobState::kPeerDead)) == "peer dead");
  CHECK(std::string(to_string(OobState::kLocalClosed)) == "closed locally");
}
