// The giop:clan plugin's monitor and readiness logic, driven directly the
// way omniORB's server core drives it (no ORB_init): AcceptAndMonitor hands
// armed readable connections over once, setSelectable/clearSelectable arm and
// disarm, data_in_buffer dispatches without new data, Peek takes a connection
// from the monitor, a closed peer looks readable, Poke ends the monitor.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "orb_transports/clan/clan_address.hpp"
#include "orb_transports/clan/clan_connection.hpp"
#include "orb_transports/clan/clan_endpoint.hpp"
#include "orb_transports/common/monitored_connection.hpp"
#include "orb_transports/plugin_pair.hpp"

using namespace clanorb;
using namespace std::chrono_literals;

namespace {

using plugin_test::after;
using plugin_test::eventually;
using Pair = plugin_test::Pair<ClanEndpoint, ClanAddress>;
using Server = plugin_test::Server<ClanEndpoint>;

}  // namespace

TEST_CASE("clan monitor: an armed connection is handed over once when data arrives",
          "[clan_plugin]") {
  Pair p;
  p.conn->setSelectable(1);
  p.send("hello");
  REQUIRE(eventually([&] { return p.server.notified == 1; }));
  CHECK(p.server.last == p.conn);
  // One-shot: more data, no second notification until re-armed.
  p.send("again");
  char buf[64] = {};
  CHECK(p.conn->Recv(buf, sizeof buf, after(5s)) == 10);  // both messages in one Recv
  CHECK(std::string(buf, 10) == "helloagain");
  p.send("third");
  CHECK_FALSE(eventually([&] { return p.server.notified > 1; }, 50ms));
  p.conn->setSelectable(1);  // re-armed with data already there: handed over at once
  REQUIRE(eventually([&] { return p.server.notified == 2; }));
}

TEST_CASE("clan monitor: a disarmed connection is not handed over", "[clan_plugin]") {
  Pair p;
  p.conn->setSelectable(1);
  p.conn->clearSelectable();
  p.send("hello");
  CHECK_FALSE(eventually([&] { return p.server.notified > 0; }, 50ms));
  // setSelectable(2) arms only a connection that is already selectable.
  p.conn->setSelectable(2);
  CHECK_FALSE(eventually([&] { return p.server.notified > 0; }, 50ms));
}

TEST_CASE("clan monitor: data_in_buffer dispatches without new data", "[clan_plugin]") {
  Pair p;
  p.conn->setSelectable(1, 1);
  REQUIRE(eventually([&] { return p.server.notified == 1; }));
}

TEST_CASE("clan monitor: Peek takes a request that arrives in the watch period", "[clan_plugin]") {
  Pair p;
  p.conn->setSelectable(1);
  std::thread sender([&] { p.client->Send((void*)"x", 1, after(5s)); });
  CORBA::Boolean got = p.conn->Peek();
  sender.join();
  if (!got) {
    // The monitor may have won the race for it; exactly one of the two did.
    REQUIRE(eventually([&] { return p.server.notified == 1; }));
  } else {
    CHECK(p.server.notified == 0);
  }
  char c;
  CHECK(p.conn->Recv(&c, 1, after(5s)) == 1);
}

TEST_CASE("clan monitor: Peek with nothing to read gives up after the watch period",
          "[clan_plugin]") {
  Pair p;
  p.conn->setSelectable(1);
  CHECK_FALSE(p.conn->Peek());
  CHECK(p.server.notified == 0);
}

TEST_CASE("clan monitor: a peer that shuts down looks readable and Recv says -1",
          "[clan_plugin]") {
  Pair p;
  p.conn->setSelectable(1);
  p.client->Shutdown();
  REQUIRE(eventually([&] { return p.server.notified == 1; }));
  char buf[8];
  CHECK(p.conn->Recv(buf, sizeof buf, after(5s)) == -1);
  CHECK(p.client->Send(buf, 1, after(5s)) == -1);
}

TEST_CASE("clan connection: Recv times out at its deadline with 0", "[clan_plugin]") {
  Pair p;
  char buf[8];
  auto start = std::chrono::steady_clock::now();
  CHECK(p.client->Recv(buf, sizeof buf, after(30ms)) == 0);
  CHECK(std::chrono::steady_clock::now() - start >= 25ms);
}

TEST_CASE("clan connection: large sends are split into ring-sized chunks", "[clan_plugin]") {
  Pair p;
  std::vector<char> big(1 << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7);
  std::thread sender([&] {
    size_t off = 0;
    while (off < big.size()) {
      int n = p.client->Send(big.data() + off, big.size() - off, after(10s));
      if (n <= 0) return;
      off += static_cast<size_t>(n);
    }
  });
  std::vector<char> got(big.size());
  size_t off = 0;
  while (off < got.size()) {
    int n = p.conn->Recv(got.data() + off, got.size() - off, after(10s));
    REQUIRE(n > 0);
    off += static_cast<size_t>(n);
  }
  sender.join();
  CHECK(got == big);
}

TEST_CASE("clan monitor: Poke makes AcceptAndMonitor return 0", "[clan_plugin]") {
  auto* s = new Server();
  s->ep->Poke();
  REQUIRE(eventually([&] { return s->monitor_returned.load(); }));
  s->monitor.join();
  s->monitor = std::thread([] {});  // ~Server pokes and joins again
  delete s;
}
