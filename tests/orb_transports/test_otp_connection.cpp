// The giop:otp plugin's connection, driven directly (no ORB_init): during
// steady request-reply traffic each call moves the connection's timers
// later, which must not wake the process's timer service; the thread in
// Recv runs them itself.
#include <catch2/catch.hpp>

#include <atomic>
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

using namespace clanorb;
using namespace std::chrono_literals;
using plugin_test::after;
using Pair = plugin_test::Pair<OtpEndpoint, OtpAddress>;

namespace {

using Bytes = std::vector<std::byte>;

// A little-endian GIOP 1.2 message of `type` (0 Request, 1 Reply) whose
// body starts with request id 1 and `flags` (for a Request, bit 0: a
// response is expected), padded to `body` bytes.
Bytes giop_12(uint8_t type, uint8_t flags, size_t body) {
  Bytes m = {std::byte{'G'}, std::byte{'I'}, std::byte{'O'}, std::byte{'P'},
             std::byte{1},   std::byte{2},   std::byte{1},   std::byte{type}};
  for (int i = 0; i < 4; ++i) m.push_back(std::byte((body >> (8 * i)) & 0xff));
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
  while (ok && elapsed < 100 * rto_ns) {
    ok = call();
    ++calls;
    elapsed = clan::now_ns() - started;
  }
  const uint64_t notified = service.notifications() - notified_before;
  p.client->Shutdown();
  server.join();
  REQUIRE(ok);
  CHECK(served == calls + 10);
  CHECK(in == reply);
  INFO(calls << " calls in " << elapsed / 1000 << " us, " << notified << " wake-ups");
  // A thread preempted for longer than an RTO between two calls may cost
  // one; steady traffic none.
  CHECK(notified <= 3);
}
