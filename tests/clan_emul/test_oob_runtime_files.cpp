// Tests of the out-of-band connection manager: node names and the runtime
// directory: locks, reuse, the sweep of dead nodes' files. The multi-process
// scheme and the helpers: oob_test_support.hpp.
#include <catch2/catch.hpp>
#include <string>

#include "clan_emul/oob_manager.hpp"
#include "oob_test_support.hpp"

using namespace clan;
using namespace clan::oob_test;
using namespace std::chrono_literals;

TEST_CASE("oob: node name in use in this process is kAddressInUse, freed with its files on destruction", "[oob]") {
  TempDir dir;
  auto a = OobManager::start(config(dir, "dup"));
  REQUIRE(a.ok());
  CHECK(dir.has("dup.lock"));
  CHECK(dir.has("dup.oob"));
  CHECK(OobManager::start(config(dir, "dup")).error() == Errc::kAddressInUse);
  a.value().reset();
  CHECK_FALSE(dir.has("dup.lock"));
  CHECK_FALSE(dir.has("dup.oob"));
  CHECK(OobManager::start(config(dir, "dup")).ok());
}

TEST_CASE("oob: node name held by a live process is kAddressInUse and reusable after it dies", "[oob]") {
  TempDir dir;
  Child holder([&](Child& self) {
    auto mgr = OobManager::start(config(dir, "dup"));
    CHILD_CHECK(mgr.ok());
    self.tell("ready");
    self.heard(Deadline::after(60s));
    return 0;
  });
  Child cli([&](Child& self) {
    CHILD_CHECK(self.heard(Deadline::after(30s)) == "go");
    auto m = OobManager::start(config(dir, "cli"));
    CHILD_CHECK(m.ok());
    auto c = (*m)->connect("dup", 1, pattern(5, 5), Deadline::after(20s));
    CHILD_CHECK(c.ok());
    return 0;
  });
  REQUIRE(holder.hear(Deadline::after(20s)) == "ready");
  CHECK(OobManager::start(config(dir, "dup")).error() == Errc::kAddressInUse);
  holder.kill_and_reap();
  auto again = OobManager::start(config(dir, "dup"));
  REQUIRE(again.ok());
  // And it really works under the reclaimed name.
  auto l = (*again)->listen(1);
  REQUIRE(l.ok());
  cli.say("go");
  auto req = (*l)->next_request(Deadline::after(20s));
  REQUIRE(req.ok());
  CHECK(req->peer_blob() == pattern(5, 5));
  CHECK(req->accept({}).ok());
  CHECK(cli.wait_exit(Deadline::after(20s)) == 0);
}

TEST_CASE("oob: a starting node removes the files of killed nodes and leaves live ones", "[oob]") {
  TempDir dir;
  // All up before any dies: each start sweeps what is dead by then.
  Child dead1([&](Child& self) { return holding_node(self, dir, "dead1"); });
  Child dead2([&](Child& self) { return holding_node(self, dir, "dead2"); });
  Child live([&](Child& self) { return accepting_server(self, dir, "live", 7, 1); });
  for (Child* c : {&dead1, &dead2, &live}) REQUIRE(c->hear(Deadline::after(20s)) == "ready");
  dead1.kill_and_reap();
  dead2.kill_and_reap();
  for (const char* f : {"dead1.lock", "dead1.oob", "dead2.lock", "dead2.oob"}) CHECK(dir.has(f));

  auto mgr = OobManager::start(config(dir, "fresh"));
  REQUIRE(mgr.ok());
  for (const char* f : {"dead1.lock", "dead1.oob", "dead2.lock", "dead2.oob"}) {
    INFO(f);
    CHECK_FALSE(dir.has(f));
  }
  CHECK(dir.has("live.lock"));
  CHECK(dir.has("live.oob"));
  CHECK(dir.has("fresh.lock"));
  CHECK((*mgr)->connect("live", 7, {}, Deadline::after(20s)).ok());
  REQUIRE(live.hear(Deadline::after(20s)) == "accepted");
  live.say("done");
  CHECK(live.wait_exit(Deadline::after(20s)) == 0);
}

TEST_CASE("oob: a node starting under a dead node's name while another node sweeps it keeps the name",
          "[oob]") {
  TempDir dir;
  constexpr int kRounds = 30;
  for (int round = 0; round < kRounds; ++round) {
    INFO("round " << round);
    leave_killed_node(dir, "name");
    REQUIRE(dir.has("name.lock"));
    // Both start at the word "go": one takes the name, the other sweeps it.
    auto at_go = [&dir](std::string node) {
      return [&dir, node](Child& self) {
        CHILD_CHECK(self.heard(Deadline::after(30s)) == "go");
        return accepting_server(self, dir, node, 7, 1);
      };
    };
    Child owner(at_go("name")), sweeper(at_go("other" + std::to_string(round)));
    owner.say("go");
    sweeper.say("go");
    REQUIRE(owner.hear(Deadline::after(20s)) == "ready");
    REQUIRE(sweeper.hear(Deadline::after(20s)) == "ready");
    // The name's files are the owner's: it is reachable through them.
    CHECK(dir.has("name.lock"));
    CHECK(dir.has("name.oob"));
    auto mgr = OobManager::start(config(dir, "probe"));
    REQUIRE(mgr.ok());
    CHECK((*mgr)->connect("name", 7, {}, Deadline::after(20s)).ok());
  }
}
