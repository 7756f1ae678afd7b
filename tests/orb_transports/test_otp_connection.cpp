// The giop:otp plugin's connection, driven directly (no ORB_init): during
// steady request-reply traffic each call moves the connection's timers
// later, which must not wake the process's timer service (the thread in
// Recv runs them itself); the engine's own packets do not hand a server
// connection to omniORB; a one-way larger than omniORB accepts is refused
// before it is all gathered; a client connection deleted while the timer
// service runs it waits for that call; datagrams left waiting for credit go
// once the peer reads, though no thread of ours reads again; datagrams taken
// in by the monitor's look beside Recv reach the engine in order.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <string>
#include <cstdint>
#include <thread>
#include <vector>

#include "clan_emul/deadline.hpp"
#include "orb_transports/common/fabric.hpp"
#include "orb_transports/otp/otp_address.hpp"
#include "orb_transports/otp/otp_connection.hpp"
#include "orb_transports/otp/otp_endpoint.hpp"
#include "orb_transports/otp/otp_timer_service.hpp"
#include "orb_transports/plugin_pair.hpp"

#include <orbParameters.h>

using namespace clanorb;
using namespace std::chrono_literals;
using plugin_test::after;
using Pair = plugin_test::Pair<OtpEndpoint, OtpAddress>;

namespace {

using Bytes = std::vector<std::byte>;

// A little-endian GIOP 1.2 message of `type` (0 Request, 1 Reply) whose
// body starts with request id 1 and `flags` (for a Request, bit 0: a
// response is expected), padded to `body` bytes; its header declares
// `declared` body bytes (default: `body`).
Bytes giop_12(uint8_t type, uint8_t flags, size_t body, uint32_t declared = 0) {
  if (declared == 0) declared = static_cast<uint32_t>(body);
  Bytes m = {std::byte{'G'}, std::byte{'I'}, std::byte{'O'}, std::byte{'P'},
             std::byte{1},   std::byte{2},   std::byte{1},   std::byte{type}};
  for (int i = 0; i < 4; ++i) m.push_back(std::byte((declared >> (8 * i)) & 0xff));
  const size_t start = m.size();
  m.resize(start + body, std::byte{0x5a});
  m[start] = std::byte{1};  // request id 1, little-endian
  m[start + 1] = m[start + 2] = m[start + 3] = std::byte{0};
  m[start + 4] = std::byte{flags};
  return m;
}

// Reads exactly `n` bytes; false on an error or a timeout.
bool recv_all(omni::giopConnection* c, std::byte* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    const int r = c->Recv(buf + got, n - got, after(5s));
    if (r <= 0) return false;
    got += static_cast<size_t>(r);
  }
  return true;
}

}  // namespace

TEST_CASE("otp connection: steady request-reply traffic does not wake the timer service",
          "[otp_plugin]") {
  const uint64_t rto_ns = uint64_t{fabric_options().otp_rto_us} * 1000;
  Pair p;
  const Bytes request = giop_12(0, 3, 32);
  const Bytes reply = giop_12(1, 0, 24);
  std::atomic<int> served{0};
  // The server side: a thread per connection, as omniORB's default. It
  // serves until the client closes.
  std::thread server([&] {
    Bytes in(request.size());
    while (recv_all(p.conn, in.data(), in.size()) &&
           p.conn->Send((void*)reply.data(), reply.size(), after(5s)) == (int)reply.size()) {
      ++served;
    }
  });
  Bytes in(reply.size());
  auto call = [&] {
    return p.client->Send((void*)request.data(), request.size(), after(5s)) == (int)request.size() &&
           recv_all(p.client, in.data(), in.size());
  };
  // The first calls set the connections' timers up: not counted.
  bool ok = true;
  for (int i = 0; i < 10 && ok; ++i) ok = call();
  OtpTimerService& service = OtpTimerService::instance();
  const uint64_t notified_before = service.notifications();
  // Calls for 100 RTOs: a timer moved forward at every call, or at every
  // one the timer service runs (about each RTO), shows as dozens of wake-ups.
  const uint64_t started = clan::now_ns();
  uint64_t elapsed = 0;
  int calls = 0;
  // Calls that took half an RTO or more: a thread preempted that long (a
  // loaded machine) may let a timer come due, which is no steady traffic.
  int stalled = 0;
  while (ok && elapsed < 100 * rto_ns) {
    ok = call();
    ++calls;
    const uint64_t now = clan::now_ns() - started;
    if (now - elapsed >= rto_ns / 2) ++stalled;
    elapsed = now;
  }
  const uint64_t notified = service.notifications() - notified_before;
  p.client->Shutdown();
  server.join();
  REQUIRE(ok);
  CHECK(served == calls + 10);
  CHECK(in == reply);
  INFO(calls << " calls in " << elapsed / 1000 << " us, " << notified << " wake-ups, " << stalled
              << " calls stalled");
  // A stalled call may cost a wake-up or two; steady traffic none.
  CHECK(notified <= 3 + 2 * static_cast<uint64_t>(stalled));
}

namespace {
// One call from `client` to `server`, the server's side answering.
void one_call(omni::giopConnection* client, omni::giopConnection* server) {
  const Bytes request = giop_12(0, 3, 32);
  const Bytes reply = giop_12(1, 0, 24);
  REQUIRE(client->Send((void*)request.data(), request.size(), after(5s)) == (int)request.size());
  Bytes in(request.size());
  REQUIRE(recv_all(server, in.data(), in.size()));
  REQUIRE(server->Send((void*)reply.data(), reply.size(), after(5s)) == (int)reply.size());
  Bytes rin(reply.size());
  REQUIRE(recv_all(client, rin.data(), rin.size()));
}
}  // namespace

TEST_CASE("otp connection: a client's idle acknowledgement alone does not hand the server's connection to omniORB",
          "[otp_plugin]") {
  Pair p;
  auto* server = dynamic_cast<OtpConnection*>(p.conn);
  REQUIRE(server != nullptr);
  one_call(p.client, p.conn);
  // The call is over: omniORB gives the connection back to the monitor.
  p.conn->setSelectable(1);
  const int before = p.server.notified.load();
  // The idle client acknowledges the reply (its timer, after a few ms). The
  // monitor looks: there is nothing for omniORB, whose thread would wait in
  // Recv for a request that may never come.
  REQUIRE(plugin_test::eventually(
      [&] { return server->protocol_stats().call_acks_received >= 1 || p.server.notified.load() > before; }));
  CHECK(p.server.notified.load() == before);
  // A request is.
  const Bytes request = giop_12(0, 3, 32);
  REQUIRE(p.client->Send((void*)request.data(), request.size(), after(5s)) == (int)request.size());
  REQUIRE(plugin_test::eventually([&] { return p.server.notified.load() > before; }));
  CHECK(p.server.last.load() == p.conn);
  Bytes in(request.size());
  REQUIRE(recv_all(p.conn, in.data(), in.size()));
  CHECK(in == request);
}

TEST_CASE("otp connection: a one-way larger than omniORB accepts ends the connection before it is all gathered",
          "[otp_plugin]") {
  Pair p;
  const size_t limit = omni::orbParameters::giopMaxMsgSize;
  constexpr size_t kChunk = 64 * 1024;
  // A GIOP 1.2 one-way (no response) declaring twice the limit, sent whole.
  const size_t total = 2 * limit;
  std::atomic<size_t> sent{0};
  std::thread client([&] {
    Bytes first = giop_12(0, 0, kChunk - 12, static_cast<uint32_t>(total - 12));
    if (p.client->Send(first.data(), first.size(), after(10s)) != (int)first.size()) return;
    sent += first.size();
    const Bytes chunk(kChunk, std::byte{0x33});
    while (sent < total && p.client->Send((void*)chunk.data(), chunk.size(), after(10s)) == (int)chunk.size()) {
      sent += chunk.size();
    }
  });
  auto* server = dynamic_cast<OtpConnection*>(p.conn);
  auto* sender = dynamic_cast<OtpConnection*>(p.client);
  REQUIRE(server != nullptr);
  REQUIRE(sender != nullptr);
  // The server's Recv: nothing for omniORB, then the end; not a timeout.
  std::byte hdr[12];
  int r = 0;
  for (int i = 0; i < 100 && r == 0; ++i) r = p.conn->Recv(hdr, sizeof hdr, after(100ms));
  const uint64_t taken = server->protocol_stats().packets_received;
  p.conn->Shutdown();  // what omniORB does after the error
  client.join();
  CHECK(r == -1);
  // The server gave up before taking it all in. (What the client's Send
  // accepted says nothing: packets waiting for credit queue at the client.)
  const uint64_t queued = sender->protocol_stats().packets_sent;
  INFO("packets the server took in by the time Recv failed: " << taken << " of " << queued << " the client queued");
  CHECK(taken < queued);
}

TEST_CASE("otp connection: a client connection released while the timer service runs it", "[otp_plugin]") {
  // Under ThreadSanitizer this shows a destructor racing the service's
  // call into the object (its virtual functions being replaced).
  plugin_test::Server<OtpEndpoint> server;
  const char* a = server.ep->address();
  const char* rest = std::strchr(std::strchr(a, ':') + 1, ':') + 1;
  std::string node;
  uint16_t port = 0;
  REQUIRE(parse_node_address(rest, node, port, false));
  OtpAddress addr(node, port);
  OtpTimerService& service = OtpTimerService::instance();
  int while_running = 0;
  // Until the release has come while the service ran a few times: on a
  // loaded host one look in several can miss the moment.
  int rounds = 0;
  for (; rounds < 60 && while_running < 5; ++rounds) {
    CORBA::Boolean timed_out = 0;
    omni::giopActiveConnection* active = addr.Connect(after(10s), 0, timed_out);
    REQUIRE(active != nullptr);
    omni::giopConnection* client = &active->getConnection();
    omni::giopConnection* conn = server.next_accepted();
    REQUIRE(conn != nullptr);
    one_call(client, conn);
    // The service runs the client's idle acknowledgement a few ms on; the
    // client is released then, without a Shutdown.
    while_running += plugin_test::eventually([&] { return service.sleeping_until() == 0; }, 200ms);
    client->decrRefCount(1);
    conn->Shutdown();
    conn->decrRefCount(1);
  }
  INFO(while_running << " of " << rounds << " releases came while the service ran");
  CHECK(while_running > 0);
}

TEST_CASE("otp connection: datagrams left waiting for credit when Send's deadline passed go once the peer reads, though nobody reads here",
          "[otp_plugin]") {
  // Two credits: a one-way of eleven datagrams sends two, then waits.
  FabricOptions& options = fabric_options();
  const uint32_t window = options.otp_window;
  options.otp_window = 2;
  Pair p;
  options.otp_window = window;
  const Bytes oneway = giop_12(0, 0, 11 * 9000);
  // The server does not read yet: Send's deadline passes with most of the
  // one-way still waiting for credit. (omniORB then goes on; no thread of
  // the client's will read or send on this connection again.)
  REQUIRE(p.client->Send((void*)oneway.data(), oneway.size(), after(20ms)) == (int)oneway.size());
  // The server reads, which returns credit; the client's timer service must
  // take the credit in and send the rest.
  Bytes in(oneway.size());
  const uint64_t started = clan::now_ns();
  const bool whole = recv_all(p.conn, in.data(), in.size());
  INFO("the rest of the one-way took " << (clan::now_ns() - started) / 1000 << " us");
  CHECK(whole);
  CHECK((in == oneway));
}

TEST_CASE("otp connection: datagrams the monitor takes in while a reader comes reach the engine in link order",
          "[otp_plugin]") {
  // The monitor's look at a server connection (readable()) feeds the engine
  // what the link holds when no thread is in Recv. A reader coming in
  // meanwhile must not feed the engine a datagram it took off the link
  // after one the monitor holds: the engine would see a gap and abort the
  // one-way being received (at 0 % loss).
  Pair p;
  auto* server = dynamic_cast<OtpConnection*>(p.conn);
  REQUIRE(server != nullptr);
  constexpr int kOneways = 1500;
  const Bytes oneway = giop_12(0, 0, 3 * 8192);  // several datagrams each
  std::atomic<bool> done{false};
  std::atomic<int> sent{0};
  std::thread client([&] {
    Bytes out = oneway;  // Send writes headers into it for a moment (the copy-out trick)
    for (int i = 0; i < kOneways && !done; ++i) {
      if (p.client->Send(out.data(), out.size(), after(10s)) != (int)out.size()) return;
      ++sent;
    }
  });
  std::thread monitor([&] {
    while (!done) {
      p.conn->setSelectable(1);  // looks at the connection (readable())
      p.conn->clearSelectable();
    }
  });
  int whole = 0;
  Bytes in(oneway.size());
  while (whole < kOneways && recv_all(p.conn, in.data(), in.size()) && in == oneway) ++whole;
  done = true;
  monitor.join();
  client.join();
  const otp::Stats s = server->protocol_stats();
  INFO(whole << " of " << sent.load() << " one-ways sent arrived whole; " << s.out_of_sequence
             << " datagrams came out of sequence, " << s.oneways_aborted << " one-ways aborted");
  CHECK(s.oneways_aborted == 0);
  CHECK(s.out_of_sequence == 0);
  CHECK(whole == kOneways);
}
