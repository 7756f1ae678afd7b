// MonitoredConnection keeps "selectable" and "armed" together when a worker
// re-arms a connection while the monitor is claiming it for a dispatch: a
// connection left selectable but not armed would never be handed over again
// (its requests unseen until the client gave up). A connection made
// selectable "not now" (setSelectable(0), what omniORB asks before each
// upcall) is armed only by the monitor's next sweep.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "orb_transports/clan/clan_endpoint.hpp"
#include "orb_transports/common/monitored_connection.hpp"

using namespace clanorb;

namespace {

// Readiness under test control; arming is recorded, slowly, to widen the
// window in which a disarm and an arm can cross.
class FakeConnection : public MonitoredConnection {
 public:
  explicit FakeConnection(MonitoredEndpoint* ep) : MonitoredConnection(ep) {}
  ~FakeConnection() override { detach_from_endpoint(); }
  int Send(void*, size_t, const omni_time_t&) override { return -1; }
  int Recv(void*, size_t, const omni_time_t&) override { return -1; }
  void Shutdown() override {}
  const char* myaddress() override { return "fake"; }
  const char* peeraddress() override { return "fake"; }

  std::atomic<bool> ready{false};
  std::atomic<bool> armed{false};

 protected:
  bool readable() override { return ready.load(); }
  bool wait_readable(clan::Deadline) override { return ready.load(); }
  void notify_to(clan::EventQueue* queue, uint32_t) override {
    for (int i = 0; i < 50; ++i) std::this_thread::yield();
    armed.store(queue != nullptr);
  }
};

}  // namespace

TEST_CASE("monitor: a worker's re-arm racing the monitor's claim never leaves it selectable but deaf",
          "[plugin]") {
  auto* ep = new ClanEndpoint("", 0);
  REQUIRE(ep->Bind());
  {
    FakeConnection c(ep);
    int inconsistent = 0;
    for (int i = 0; i < 2000; ++i) {
      c.ready = true;
      c.setSelectable(1);  // armed, and readable: the monitor may claim it
      std::thread worker([&c] { c.setSelectable(1); });  // a worker re-arms
      c.claim_for_dispatch();
      worker.join();
      // Now either the claim came last (not selectable) or the re-arm did
      // (selectable): then it must be armed too. A second claim tells which.
      const bool armed = c.armed.load();
      if (c.claim_for_dispatch() && !armed) ++inconsistent;
      c.clearSelectable();
    }
    CHECK(inconsistent == 0);
  }
  ep->Shutdown();
}

namespace {
void on_readable(void* cookie, omni::giopConnection*) {
  static_cast<std::atomic<int>*>(cookie)->fetch_add(1);
}

// An endpoint whose monitor runs on a thread of its own, counting the
// connections it hands over; poked and shut down at the end.
struct RunningMonitor {
  ClanEndpoint* ep = new ClanEndpoint("", 0);
  std::atomic<int> handed{0};
  std::thread thread;
  RunningMonitor() {
    REQUIRE(ep->Bind());
    thread = std::thread([this] {
      // Returns 0 when poked (no connect requests come to this endpoint).
      while (ep->AcceptAndMonitor(&on_readable, &handed) != nullptr) {
      }
    });
  }
  ~RunningMonitor() {
    ep->Poke();
    thread.join();
    ep->Shutdown();
  }
};

// Polls `done` until it holds or 10 s have passed (then the CHECKs fail).
template <class Done>
void wait_for(Done&& done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}
}  // namespace

TEST_CASE("monitor: a readable connection whose readiness event never came is handed over by the sweep",
          "[plugin]") {
  RunningMonitor m;
  FakeConnection c(m.ep);
  c.setSelectable(1);  // armed, nothing to read: no event
  c.ready = true;      // data "arrives" without its event (notify_to is deaf)
  wait_for([&] { return m.handed.load() > 0; });
  CHECK(m.handed.load() == 1);
  CHECK_FALSE(c.claim_for_dispatch());  // the sweep claimed it: one-shot
  c.clearSelectable();
}

TEST_CASE("monitor: setSelectable(0) leaves the connection unarmed until the sweep, 1 and 2 arm at once",
          "[plugin]") {
  auto* ep = new ClanEndpoint("", 0);
  REQUIRE(ep->Bind());
  {
    FakeConnection c(ep);
    c.setSelectable(0);
    CHECK_FALSE(c.armed.load());  // a call that ends before the sweep never arms it
    c.ready = true;
    CHECK(c.claim_for_dispatch());  // still selectable: a readable one may be handed over
    CHECK_FALSE(c.armed.load());
    c.setSelectable(0);
    c.setSelectable(2);  // "if selectable, selectable now"
    CHECK(c.armed.load());
    c.clearSelectable();
    CHECK_FALSE(c.armed.load());
    c.setSelectable(2);  // not selectable: nothing
    CHECK_FALSE(c.armed.load());
    c.setSelectable(0, 1);  // data in omniORB's buffer: watched at once
    CHECK(c.armed.load());
    c.clearSelectable();
  }
  ep->Shutdown();
}

TEST_CASE("monitor: a connection made selectable not-now is armed by the next sweep, and handed over "
          "if readable",
          "[plugin]") {
  RunningMonitor m;
  FakeConnection c(m.ep);
  // An upcall that outlasts the sweep period: its connection gets watched.
  c.setSelectable(0);
  wait_for([&] { return c.armed.load(); });
  CHECK(c.armed.load());
  CHECK(m.handed.load() == 0);  // nothing to read
  c.clearSelectable();
  // An interleaved call already waiting: armed and handed over at once.
  c.ready = true;
  c.setSelectable(0);
  wait_for([&] { return m.handed.load() > 0; });
  CHECK(m.handed.load() == 1);
  CHECK_FALSE(c.armed.load());  // one-shot: disarmed for the dispatch
  c.clearSelectable();
}
