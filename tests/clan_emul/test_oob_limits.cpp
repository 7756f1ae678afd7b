// Tests of the out-of-band connection manager: garbage on the wire and many
// connections. The multi-process scheme and the helpers: oob_test_support.hpp.
#include <fcntl.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <set>
#include <thread>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "clan_emul/oob_manager.hpp"
#include "clan_emul/oob_wire.hpp"
#include "oob_test_support.hpp"

using namespace clan;
using namespace clan::oob_test;
using namespace std::chrono_literals;

TEST_CASE("oob: garbage frames sent to the ROUTER are dropped and later connections work", "[oob]") {
  using namespace oob_wire;
  TempDir dir;
  Child cli([&](Child& self) {
    CHILD_CHECK(self.heard(Deadline::after(30s)) == "go");
    auto m = OobManager::start(config(dir, "cli"));
    CHILD_CHECK(m.ok());
    auto c = (*m)->connect("victim", 7, pattern(300, 9), Deadline::after(20s));
    CHILD_CHECK(c.ok());
    CHILD_CHECK((*c)->peer_blob() == pattern(77, 4));
    return 0;
  });
  auto mgr = OobManager::start(config(dir, "victim"));
  REQUIRE(mgr.ok());
  auto l = (*mgr)->listen(7);
  REQUIRE(l.ok());

  // A fake node "raw" whose lock we hold, so its valid request is taken and
  // serves as a marker: it is read after all the garbage sent before it.
  int raw_lock = ::open((dir.path + "/raw.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  REQUIRE(raw_lock >= 0);
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  REQUIRE(::fcntl(raw_lock, F_OFD_SETLK, &fl) == 0);

  zmq::context_t ctx;
  zmq::socket_t raw(ctx, zmq::socket_type::dealer);
  raw.set(zmq::sockopt::linger, 0);
  raw.connect("ipc://" + dir.path + "/victim.oob");
  auto send = [&](const std::vector<std::byte>& f) { raw.send(zmq::buffer(f), zmq::send_flags::none); };

  Message valid;
  valid.hdr.type = MsgType::kConnectReq;
  valid.hdr.node = "zzzzzz";  // not alive; far from "victim" in bit flips
  valid.hdr.instance = 77;
  valid.hdr.pid = 1;
  valid.src_conn = 5;
  valid.port = 7;
  valid.dst_node = "victim";
  valid.blob = pattern(40, 1);

  uint64_t expected_malformed = send_garbage(raw, valid);
  // The marker.
  Message marker = valid;
  marker.hdr.node = "raw";
  marker.blob = pattern(3, 3);
  send(encode(marker));

  auto req = (*l)->next_request(Deadline::after(20s));
  REQUIRE(req.ok());
  CHECK(req->peer_node() == "raw");
  CHECK(req->peer_blob() == pattern(3, 3));
  req->reject();
  auto st = (*mgr)->stats();
  CHECK(st.malformed_dropped >= expected_malformed);
  WARN("malformed dropped " << st.malformed_dropped << ", unknown dropped " << st.unknown_dropped
                            << ", peers " << st.peers);
  CHECK(st.peers <= 2);  // garbage from dead nodes allocates nothing

  // An oversize frame: ZeroMQ drops that sender (ZMQ_MAXMSGSIZE).
  zmq::socket_t big(ctx, zmq::socket_type::dealer);
  big.set(zmq::sockopt::linger, 0);
  big.connect("ipc://" + dir.path + "/victim.oob");
  big.send(zmq::buffer(std::vector<std::byte>(kMaxFrame + 1000)), zmq::send_flags::none);

  // Still serving.
  cli.say("go");
  auto r2 = (*l)->next_request(Deadline::after(20s));
  REQUIRE(r2.ok());
  CHECK(r2->peer_node() == "cli");
  CHECK(r2->peer_blob() == pattern(300, 9));
  CHECK(r2->accept(pattern(77, 4)).ok());
  CHECK(cli.wait_exit(Deadline::after(20s)) == 0);
  ::close(raw_lock);
}

TEST_CASE("oob: fifty connections between two processes", "[oob]") {
  TempDir dir;
  constexpr int kConns = 50;
  Child child([&](Child& self) {
    auto mgr = OobManager::start(config(dir, "srv"));
    CHILD_CHECK(mgr.ok());
    auto l = (*mgr)->listen(7);
    CHILD_CHECK(l.ok());
    self.tell("ready");
    std::vector<std::shared_ptr<OobConnection>> conns;
    if (int rc = accept_reversed(**l, kConns, conns); rc != 0) return rc;
    for (auto& c : conns) {
      CHILD_CHECK(c->wait_down(Deadline::after(20s)) == Errc::kOk);
      CHILD_CHECK(c->state() == OobState::kClosed);
    }
    return 0;
  });
  REQUIRE(child.hear(Deadline::after(20s)) == "ready");
  auto mgr = OobManager::start(config(dir, "cli"));
  REQUIRE(mgr.ok());
  // From four threads at once, to exercise the command queue.
  std::vector<Result<std::shared_ptr<OobConnection>>> res(kConns, Errc::kSystem);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < kConns; i += 4) {
        res[i] = (*mgr)->connect("srv", 7, pattern(16, static_cast<uint8_t>(i)), Deadline::after(20s));
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<uint64_t> ids;
  for (int i = 0; i < kConns; ++i) {
    INFO("connection " << i);
    REQUIRE(res[i].ok());
    auto expect = pattern(16, static_cast<uint8_t>(i));
    std::reverse(expect.begin(), expect.end());
    CHECK((*res[i])->peer_blob() == expect);
    ids.insert((*res[i])->id());
  }
  CHECK(ids.size() == kConns);
  for (auto& r : res) CHECK((*r)->disconnect() == Errc::kOk);
  CHECK(child.wait_exit(Deadline::after(30s)) == 0);
}
