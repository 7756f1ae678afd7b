// The giop:via plugin's connection, driven directly (no ORB_init): a
// connection shut down while it holds consumed receive buffers posts none of
// them again, so its VI (which VIPL cannot destroy with receives posted) and
// its memory are freed when omniORB lets go of it.
#include <catch2/catch.hpp>

#include <mutex>
#include <string>
#include <vector>

#include "orb_transports/plugin_pair.hpp"
#include "orb_transports/via/via_address.hpp"
#include "orb_transports/via/via_connection.hpp"
#include "orb_transports/via/via_endpoint.hpp"
#include "via/internal.hpp"

using namespace clanorb;
using namespace std::chrono_literals;
using plugin_test::after;
using Pair = plugin_test::Pair<ViaEndpoint, ViaAddress>;

namespace {

// omniORB's log, captured for the test's lifetime.
std::mutex log_mu;
std::vector<std::string> log_lines;
void capture(const char* line) {
  std::lock_guard lock(log_mu);
  log_lines.emplace_back(line);
}
struct LogCapture {
  LogCapture() {
    std::lock_guard lock(log_mu);
    log_lines.clear();
    omniORB::setLogFunction(&capture);
  }
  ~LogCapture() { omniORB::setLogFunction(nullptr); }
  size_t count(const std::string& what) {
    std::lock_guard lock(log_mu);
    size_t n = 0;
    for (const auto& l : log_lines) n += l.find(what) != std::string::npos;
    return n;
  }
};

}  // namespace

TEST_CASE("via connection: Recv after Shutdown posts no consumed buffer again, and the VI is destroyed",
          "[via_plugin]") {
  LogCapture log;
  {
    Pair p;
    p.send("hello");
    char buf[16] = {};
    // Consumed: the buffer waits to be posted again until Recv next waits.
    REQUIRE(p.conn->Recv(buf, sizeof buf, after(5s)) == 5);
    CHECK(std::string(buf, 5) == "hello");
    p.conn->Shutdown();
    // About to wait, Recv would repost; shut down, it must not.
    CHECK(p.conn->Recv(buf, sizeof buf, after(5s)) == -1);
    // The client sees the close once it has read everything.
    CHECK(p.client->Recv(buf, sizeof buf, after(5s)) == -1);
  }  // both connections released: their VIs destroyed
  CHECK(log.count("cannot destroy a VI") == 0);
}

TEST_CASE("via connection: a client shut down after a reply frees its VI", "[via_plugin]") {
  LogCapture log;
  {
    Pair p;
    p.send("request");
    char buf[16] = {};
    REQUIRE(p.conn->Recv(buf, sizeof buf, after(5s)) == 7);
    REQUIRE(p.conn->Send(buf, 5, after(5s)) == 5);
    REQUIRE(p.client->Recv(buf, sizeof buf, after(5s)) == 5);
    p.client->Shutdown();
    CHECK(p.client->Recv(buf, sizeof buf, after(5s)) == -1);
    CHECK(p.client->Send(buf, 1, after(5s)) == -1);
  }
  CHECK(log.count("cannot destroy a VI") == 0);
}

TEST_CASE("via connection: what a peer's receive cookies cover holds no descriptor of ours, and a message is "
          "read exactly once",
          "[via_plugin]") {
  Pair p;
  auto* server = dynamic_cast<ViaConnection*>(p.conn);
  REQUIRE(server != nullptr);
  auto* vi = static_cast<via::Vi*>(server->vi());
  {
    std::lock_guard lock(vi->mu);
    REQUIRE(!vi->posted.empty());
    size_t checked = 0;
    for (size_t i = 0; i < vi->posted.size(); ++i) {
      const via::PostedRecv& r = vi->posted[i];
      // The region the cookie opens, as the peer maps it: from the buffer
      // back to the region's start, cookie.length bytes on.
      const via::wire::PostSegment& seg = r.segs[0];
      const auto buf = reinterpret_cast<uintptr_t>(r.d->DS[0].Local.Data.Address);
      const uintptr_t base = buf - seg.offset;
      for (size_t k = 0; k < vi->posted.size(); ++k) {
        const auto d = reinterpret_cast<uintptr_t>(vi->posted[k].d);
        CHECK((d + sizeof(VIP_DESCRIPTOR) <= base || d >= base + seg.cookie.length));
        ++checked;
      }
    }
    CHECK(checked == vi->posted.size() * vi->posted.size());
  }
  // A message taken in pieces comes out whole and once.
  std::string msg(20000, 'm');
  msg[19999] = 'e';
  REQUIRE(p.client->Send(msg.data(), msg.size(), after(5s)) == (int)msg.size());
  std::vector<char> out(64 * 1024, 0);
  REQUIRE(p.conn->Recv(out.data(), 100, after(5s)) == 100);
  CHECK(p.conn->Recv(out.data(), out.size(), after(5s)) == (int)msg.size() - 100);
  CHECK(out[msg.size() - 101] == 'e');
}
