// Two-way DMQ connections set up over the out-of-band connection manager:
// cookies exchanged in the handshake, orderly close, and a peer that dies
// while the survivor is blocked.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "clan_emul/dmq_connection.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/oob_listener.hpp"
#include "clan_emul/oob_manager.hpp"
#include "support/child_process.hpp"
#include "support/oob_runtime.hpp"

using namespace clan;
using namespace std::chrono_literals;

namespace {

using test::oob_config;
using test::RuntimeDir;

DmqConfig small_ring() {
  DmqConfig c;
  c.ring_bytes = 16384;
  c.max_message = 4096;
  return c;
}

// The server side of every test: accepts one connection on port 7, then runs `body`.
template <class Body>
int serve(const RuntimeDir& dir, test::Pipe& ready, Body body) {
  auto nic = Nic::open({});
  auto oob = OobManager::start(oob_config(dir, "server"));
  if (!nic || !oob) return 10;
  auto listener = (*oob)->listen(7);
  if (!listener) return 11;
  ready.put('r');
  auto req = (*listener)->next_request(Deadline::after(20s));
  if (!req) return 12;
  auto conn = DmqConnection::accept(**nic, *req, small_ring());
  if (!conn) return 13;
  return body(**conn);
}

}  // namespace

TEST_CASE("a DMQ connection carries messages both ways and closes in order",
          "[dmq_connection][multiprocess]") {
  RuntimeDir dir;
  test::Pipe ready;
  test::ChildProcess server([&] {
    return serve(dir, ready, [](DmqConnection& c) {
      // Echo every message, then close after the peer closes.
      for (;;) {
        auto m = c.rx().receive(Deadline::after(20s));
        if (!m) return m.error() == Errc::kClosed ? 0 : 20;
        std::string s(reinterpret_cast<const char*>(m->data), m->size);
        c.rx().release();
        if (c.tx().send(s.data(), s.size(), Deadline::after(20s)) != Errc::kOk) return 21;
      }
    });
  });
  char token;
  REQUIRE(ready.get(token));
  auto nic = std::move(Nic::open({}).value());
  auto oob = std::move(OobManager::start(oob_config(dir, "client")).value());
  auto conn = DmqConnection::connect(*nic, *oob, "server", 7, small_ring(), Deadline::after(20s));
  REQUIRE(conn.ok());
  DmqConnection& c = *conn.value();
  for (int i = 0; i < 1000; ++i) {
    std::string msg = "message " + std::to_string(i) + std::string(i % 3000, 'x');
    REQUIRE(c.tx().send(msg.data(), msg.size(), Deadline::after(20s)) == Errc::kOk);
    auto m = c.rx().receive(Deadline::after(20s));
    REQUIRE(m.ok());
    CHECK(std::string(reinterpret_cast<const char*>(m->data), m->size) == msg);
    c.rx().release();
  }
  REQUIRE(c.close() == Errc::kOk);
  CHECK(server.wait() == 0);
}

TEST_CASE("a peer that dies wakes the blocked survivor with kPeerDead",
          "[dmq_connection][multiprocess]") {
  RuntimeDir dir;
  test::Pipe ready, accepted;
  test::ChildProcess server([&] {
    return serve(dir, ready, [&](DmqConnection&) {
      accepted.put('a');
      pause();  // killed by the parent
      return 0;
    });
  });
  char token;
  REQUIRE(ready.get(token));
  NicConfig nc;
  nc.spin_budget = 0ns;  // the survivor really sleeps
  auto nic = std::move(Nic::open(nc).value());
  auto oob = std::move(OobManager::start(oob_config(dir, "client")).value());
  auto conn = DmqConnection::connect(*nic, *oob, "server", 7, small_ring(), Deadline::after(20s));
  REQUIRE(conn.ok());
  REQUIRE(accepted.get(token));
  std::thread killer([&] { server.kill_now(); });
  auto start = std::chrono::steady_clock::now();
  auto m = (*conn)->rx().receive(Deadline::after(20s));
  auto took = std::chrono::steady_clock::now() - start;
  killer.join();
  CHECK(m.error() == Errc::kPeerDead);
  // Sends fail too, rather than filling a ring nobody reads.
  CHECK((*conn)->tx().send("x", 1, Deadline::after(5s)) == Errc::kPeerDead);
  WARN("peer death seen after "
       << std::chrono::duration_cast<std::chrono::microseconds>(took).count() << " us");
  server.wait();
}

TEST_CASE("a connect request with a malformed handshake is rejected",
          "[dmq_connection][hostile]") {
  RuntimeDir dir;
  auto nic = std::move(Nic::open({}).value());
  auto server = std::move(OobManager::start(oob_config(dir, "server")).value());
  auto client = std::move(OobManager::start(oob_config(dir, "client")).value());
  auto listener = std::move(server->listen(7).value());
  Errc connect_result = Errc::kOk;
  std::thread t([&] {
    // Garbage instead of a hello: the acceptor must refuse, not map anything.
    auto r = client->connect("server", 7, std::vector<std::byte>(13, std::byte{0x5a}),
                             Deadline::after(20s));
    connect_result = r.error();  // checked on the main thread: Catch2 is not thread-safe
  });
  auto req = listener->next_request(Deadline::after(20s));
  REQUIRE(req.ok());
  CHECK(DmqConnection::accept(*nic, *req, small_ring()).error() == Errc::kCorrupt);
  t.join();
  CHECK(connect_result == Errc::kRefused);
  CHECK(nic->imports_in_use() == 0);
}
