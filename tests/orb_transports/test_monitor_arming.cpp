// MonitoredConnection keeps "selectable" and "armed" together when a worker
// re-arms a connection while the monitor is claiming it for a dispatch: a
// connection left selectable but not armed would never be handed over again
// (its requests unseen until the client gave up).
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
      c.setSelectable(0);  // armed, and readable: the monitor may claim it
      std::thread worker([&c] { c.setSelectable(0); });  // a worker re-arms before its upcall
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
}  // namespace

TEST_CASE("monitor: a readable connection whose readiness event never came is handed over by the sweep",
          "[plugin]") {
  auto* ep = new ClanEndpoint("", 0);
  REQUIRE(ep->Bind());
  std::atomic<int> handed{0};
  std::thread monitor([&] {
    // Returns 0 when poked (no connect requests come to this endpoint).
    while (ep->AcceptAndMonitor(&on_readable, &handed) != nullptr) {
    }
  });
  {
    FakeConnection c(ep);
    c.setSelectable(0);  // armed, nothing to read: no event
    c.ready = true;      // data "arrives" without its event (notify_to is deaf)
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (handed.load() == 0 && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    CHECK(handed.load() == 1);
    CHECK_FALSE(c.claim_for_dispatch());  // the sweep claimed it: one-shot
    c.clearSelectable();
  }
  ep->Poke();
  monitor.join();
  ep->Shutdown();
}
