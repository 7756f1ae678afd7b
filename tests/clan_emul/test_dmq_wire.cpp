// A DMQ connection between NICs of different hosts: the handshake tells
// each side where the other's NIC is, each links its wire to the other's,
// and the queues run over the wire (clan_emul/wire/). The server runs in a
// forked child posing as another host (tests/support/other_host.hpp).
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "clan_emul/dmq_connection.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/host_identity.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/oob_listener.hpp"
#include "clan_emul/oob_manager.hpp"
#include "support/child_process.hpp"
#include "support/oob_runtime.hpp"
#include "support/other_host.hpp"
#include "tests/clan_emul/wire_pair.hpp"

using namespace clan;
using namespace std::chrono_literals;

namespace {

DmqConfig ring() {
  DmqConfig c;
  c.ring_bytes = 64 * 1024;
  c.max_message = 16 * 1024;
  return c;
}

// A server of the other host: its NIC, its node and the request of the
// one client it waits for (`ready` says it listens). `failed`: the exit
// code of what went wrong.
struct OtherHostServer {
  std::unique_ptr<Nic> nic;
  std::unique_ptr<OobManager> oob;
  std::optional<OobRequest> request;
  int failed = 0;

  OtherHostServer(const test::RuntimeDir& dir, test::Pipe& ready) {
    const HostIdentity parent = this_host();
    if (int e = test::become_other_host(); e != 0) {
      failed = e;
      return;
    }
    if (this_host().same_host(parent)) failed = 9;
    auto n = Nic::open(test::wire_nic_config("server"));
    auto o = OobManager::start(test::oob_config(dir, "server"));
    if (failed || !n || !o) {
      failed = failed ? failed : 10;
      return;
    }
    nic = std::move(n.value());
    oob = std::move(o.value());
    auto listener = oob->listen(7);
    if (!listener) {
      failed = 11;
      return;
    }
    ready.put('r');
    auto req = (*listener)->next_request(Deadline::after(20s));
    if (req) request.emplace(std::move(req.value())); else failed = 12;
  }
};

// The other host: echoes every message until the peer closes.
int echo_server(const test::RuntimeDir& dir, test::Pipe& ready) {
  OtherHostServer server(dir, ready);
  if (server.failed) return server.failed;
  auto conn = DmqConnection::accept(*server.nic, *server.request, ring());
  if (!conn) {
    // A client without a wire on another host: refused, and the words say why.
    const bool said_why = error_message(conn.error()).find("no wire") != std::string::npos;
    return conn.error() == Errc::kRefused && said_why ? 30 : 13;
  }
  DmqConnection& c = **conn;
  for (;;) {
    auto m = c.rx().receive(Deadline::after(20s));
    if (!m) return m.error() == Errc::kClosed ? 0 : 20;
    std::string s(reinterpret_cast<const char*>(m->data), m->size);
    c.rx().release();
    if (c.tx().send(s.data(), s.size(), Deadline::after(20s)) != Errc::kOk) return 21;
  }
}

// The other host: sends `count` messages at once, then closes; it stays
// (its NIC with it) until `done`.
int send_then_close(const test::RuntimeDir& dir, test::Pipe& ready, test::Pipe& done, int count) {
  OtherHostServer server(dir, ready);
  if (server.failed) return server.failed;
  auto conn = DmqConnection::accept(*server.nic, *server.request, ring());
  if (!conn) return 13;
  for (int i = 0; i < count; ++i) {
    const std::string s = "last words " + std::to_string(i) + std::string(static_cast<size_t>(i) * 53 % 9000, 'z');
    if ((*conn)->tx().send(s.data(), s.size(), Deadline::after(20s)) != Errc::kOk) return 20;
  }
  if ((*conn)->close() != Errc::kOk) return 21;
  char token;
  return done.get(token) ? 0 : 22;
}

}  // namespace

namespace {

// Receives `count` messages from send_then_close over a ring of
// `ring_bytes`, then the close.
void receive_all_then_close(size_t ring_bytes, int count) {
  test::RuntimeDir dir;
  test::Pipe ready, done;
  test::ChildProcess server([&] { return send_then_close(dir, ready, done, count); });
  char token;
  REQUIRE(ready.get(token));
  auto nic = std::move(Nic::open(test::wire_nic_config("client")).value());
  auto oob = std::move(OobManager::start(test::oob_config(dir, "client")).value());
  DmqConfig rx = ring();
  rx.ring_bytes = ring_bytes;
  auto conn = DmqConnection::connect(*nic, *oob, "server", 7, rx, Deadline::after(20s));
  REQUIRE(conn.ok());
  int got = 0;
  for (;;) {
    auto m = conn.value()->rx().receive(Deadline::after(20s));
    if (!m) {
      CHECK(m.error() == Errc::kClosed);
      break;
    }
    const std::string want = "last words " + std::to_string(got) + std::string(static_cast<size_t>(got) * 53 % 9000, 'z');
    REQUIRE(std::string(reinterpret_cast<const char*>(m->data), m->size) == want);
    conn.value()->rx().release();
    ++got;
  }
  CHECK(got == count);
  done.put('d');
  CHECK(server.wait(20s) == 0);
}

}  // namespace

TEST_CASE("a DMQ connection between hosts delivers everything sent before the close", "[wire][dmq_connection][multiprocess]") {
  // A ring that holds them all, so the sender closes before we read any.
  receive_all_then_close(4 * 1024 * 1024, 200);
}

TEST_CASE("a DMQ sender of another host filling the ring again and again always gets room", "[wire][dmq_connection][multiprocess]") {
  // 2000 messages of up to 9 KB through a 64 KiB ring: the sender waits for
  // room time and again, freed by the receiver's read pointers.
  receive_all_then_close(64 * 1024, 2000);
}

TEST_CASE("a DMQ connection between hosts runs over the wire", "[wire][dmq_connection][multiprocess]") {
  test::RuntimeDir dir;
  test::Pipe ready;
  test::ChildProcess server([&] { return echo_server(dir, ready); });
  char token;
  REQUIRE(ready.get(token));
  auto nic = std::move(Nic::open(test::wire_nic_config("client")).value());
  auto oob = std::move(OobManager::start(test::oob_config(dir, "client")).value());
  auto conn = DmqConnection::connect(*nic, *oob, "server", 7, ring(), Deadline::after(20s));
  REQUIRE(conn.ok());
  DmqConnection& c = *conn.value();
  for (int i = 0; i < 2000; ++i) {
    std::string msg = "message " + std::to_string(i) + std::string((i * 37) % 12000, 'x');
    REQUIRE(c.tx().send(msg.data(), msg.size(), Deadline::after(20s)) == Errc::kOk);
    auto m = c.rx().receive(Deadline::after(20s));
    REQUIRE(m.ok());
    REQUIRE(std::string(reinterpret_cast<const char*>(m->data), m->size) == msg);
    c.rx().release();
  }
  CHECK(nic->wire()->stats().registrations == 2);  // our ring and read-pointer word
  REQUIRE(c.close() == Errc::kOk);
  CHECK(server.wait(20s) == 0);
}

TEST_CASE("a NIC without a wire cannot reach a peer on another host, and says so", "[wire][dmq_connection][multiprocess]") {
  test::RuntimeDir dir;
  test::Pipe ready;
  test::ChildProcess server([&] { return echo_server(dir, ready); });
  char token;
  REQUIRE(ready.get(token));
  auto nic = std::move(Nic::open(NicConfig{}).value());
  auto oob = std::move(OobManager::start(test::oob_config(dir, "client")).value());
  auto conn = DmqConnection::connect(*nic, *oob, "server", 7, ring(), Deadline::after(20s));
  REQUIRE(!conn.ok());
  CHECK(conn.error() == Errc::kRefused);
  CHECK(server.wait(20s) == 30);
}
