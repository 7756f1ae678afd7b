// Tests of the out-of-band connection manager: the death of a peer of
// another host, reached over tcp. The peer is a forked child that poses as
// another host: in a mount namespace of its own, a file with a fresh boot id
// is bound over /proc/sys/kernel/random/boot_id, so its pid cannot be watched
// and only the tcp rules apply (oob_tcp.cpp). That needs root (CI runs as
// root); without it the test fails and says why. The multi-process scheme
// and the helpers: oob_test_support.hpp.
#include <sched.h>
#include <sys/mount.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <string>

#include "clan_emul/error_detail.hpp"
#include "clan_emul/oob_manager.hpp"
#include "oob_test_support.hpp"

using namespace clan;
using namespace clan::oob_test;
using namespace std::chrono_literals;

namespace {

// The bound this file's header comment and DESIGN.md state for a dead
// process of another host.
constexpr auto kRemoteDeathBound = 500ms;

std::string read_boot_id() {
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::string s;
  std::getline(f, s);
  return s;
}

std::string fresh_boot_id() {
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
  const char* hex = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) id += '-';
    id += hex[rng() % 16];
  }
  return id;
}

// In a forked child: gives this process a boot id of its own. Empty on
// success, else what failed.
std::string pose_as_another_host(const TempDir& dir) {
  auto failed = [](const char* what) { return std::string(what) + ": " + std::strerror(errno); };
  const std::string before = read_boot_id();
  if (::unshare(CLONE_NEWNS) != 0) return failed("unshare(CLONE_NEWNS)");
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return failed("making / private");
  const std::string id = fresh_boot_id();
  const std::string file = dir.path + "/boot_id." + std::to_string(::getpid());
  std::ofstream(file) << id << "\n";
  if (::mount(file.c_str(), "/proc/sys/kernel/random/boot_id", nullptr, MS_BIND, nullptr) != 0) {
    return failed("bind-mounting a boot id over /proc/sys/kernel/random/boot_id");
  }
  const std::string after = read_boot_id();
  if (after != id || after == before) return "the boot id did not change (read '" + after + "')";
  return {};
}

// A child posing as another host that listens on tcp, tells "port N",
// accepts one request on port 7 and waits to be killed or stopped.
int remote_server(Child& self, const TempDir& dir) {
  if (std::string why = pose_as_another_host(dir); !why.empty()) {
    self.tell("cannot pose as another host: " + why + " (this test needs root)");
    return 1;
  }
  auto mgr = OobManager::start(tcp_config(dir, "far"));
  CHILD_CHECK(mgr.ok());
  auto l = (*mgr)->listen(7);
  CHILD_CHECK(l.ok());
  self.tell("port " + std::to_string((*mgr)->listen_port()));
  std::vector<std::shared_ptr<OobConnection>> conns;
  if (int rc = accept_reversed(**l, 1, conns); rc != 0) return rc;
  CHILD_CHECK(!conns[0]->peer_on_this_host());
  self.tell("accepted");
  self.heard(Deadline::after(60s));
  return 0;
}

// A child posing as another host that connects to node "near" at the port
// it is told, and waits to be killed.
int remote_client(Child& self, const TempDir& dir) {
  if (std::string why = pose_as_another_host(dir); !why.empty()) {
    self.tell("cannot pose as another host: " + why + " (this test needs root)");
    return 1;
  }
  self.tell("posing");
  auto port = self.heard(Deadline::after(20s));
  CHILD_CHECK(port);
  auto mgr = OobManager::start(tcp_config(dir, "far"));
  CHILD_CHECK(mgr.ok());
  auto c = (*mgr)->connect("near@127.0.0.1:" + *port, 7, {}, Deadline::after(20s));
  CHILD_CHECK(c.ok());
  self.tell("connected");
  self.heard(Deadline::after(60s));
  return 0;
}

// Connects node "near" (peer timeout `timeout`) to the child, which must be
// on another host.
std::shared_ptr<OobConnection> connect_to_remote(OobManager& near, Child& far) {
  auto line = far.hear(Deadline::after(20s));
  REQUIRE(line);
  INFO(*line);
  REQUIRE(line->rfind("port ", 0) == 0);
  const std::string address = "far@127.0.0.1:" + line->substr(5);
  auto c = near.connect(address, 7, pattern(100, 2), Deadline::after(20s));
  INFO(error_message(c.error()));
  REQUIRE(c.ok());
  REQUIRE(far.hear(Deadline::after(20s)) == "accepted");
  CHECK_FALSE((*c)->peer_on_this_host());
  CHECK((*c)->peer_address() == address);
  return c.value();
}

}  // namespace

TEST_CASE("oob tcp: a peer of another host killed with SIGKILL is reported kPeerDead within the bound",
          "[oob]") {
  TempDir dir;
  Child far([&](Child& self) { return remote_server(self, dir); });
  // A peer timeout far beyond the bound: only the evidence of death counts.
  auto near = OobManager::start(tcp_config(dir, "near", 100ms, 30s));
  REQUIRE(near.ok());
  auto c = connect_to_remote(**near, far);
  DownProbe down;
  c->set_on_down(down.fn());
  const auto t0 = Clock::now();
  far.signal(SIGKILL);
  REQUIRE(down.wait(Deadline::after(20s)));
  const double ms = ms_since(t0);
  CHECK(down.state == OobState::kPeerDead);
  CHECK(c->state() == OobState::kPeerDead);
  WARN("a peer of another host reported dead " << ms << " ms after SIGKILL");
  CHECK(ms < std::chrono::duration<double, std::milli>(kRemoteDeathBound).count());
  // Its address refuses a connect at once now.
  auto again = (*near)->connect(c->peer_address(), 7, {}, Deadline::after(20s));
  CHECK(again.error() == Errc::kRefused);
  CHECK(error_message(Errc::kRefused).find("nothing listens at") != std::string::npos);
}

TEST_CASE("oob tcp: a peer of another host that connected to us, killed with SIGKILL, is dead within the bound",
          "[oob]") {
  TempDir dir;
  Child far([&](Child& self) { return remote_client(self, dir); });  // forked before any thread
  auto posing = far.hear(Deadline::after(20s));
  INFO(posing.value_or("(nothing)"));
  REQUIRE(posing == "posing");
  auto near = OobManager::start(tcp_config(dir, "near", 100ms, 30s));
  REQUIRE(near.ok());
  auto l = (*near)->listen(7);
  REQUIRE(l.ok());
  far.say(std::to_string((*near)->listen_port()));
  auto req = (*l)->next_request(Deadline::after(20s));
  REQUIRE(req.ok());
  CHECK_FALSE(req->peer_on_this_host());
  const OobBootId far_boot = req->peer_boot_id();
  CHECK(far_boot != OobBootId{});
  CHECK(req->peer_address().rfind("far@127.0.0.1:", 0) == 0);
  auto c = req->accept({});
  REQUIRE(c.ok());
  auto line = far.hear(Deadline::after(20s));
  INFO(line.value_or("(nothing)"));
  REQUIRE(line == "connected");
  CHECK((*c)->peer_boot_id() == far_boot);
  CHECK_FALSE((*c)->peer_on_this_host());
  DownProbe down;
  (*c)->set_on_down(down.fn());
  const auto t0 = Clock::now();
  far.signal(SIGKILL);
  REQUIRE(down.wait(Deadline::after(20s)));
  const double ms = ms_since(t0);
  CHECK(down.state == OobState::kPeerDead);
  WARN("a peer of another host that connected to us reported dead " << ms << " ms after SIGKILL");
  CHECK(ms < std::chrono::duration<double, std::milli>(kRemoteDeathBound).count());
}

TEST_CASE("oob tcp: a SIGSTOPped peer of another host is not declared dead before peer_timeout", "[oob]") {
  TempDir dir;
  Child far([&](Child& self) { return remote_server(self, dir); });
  constexpr auto kHb = 100ms;
  constexpr auto kTimeout = 2s;
  auto near = OobManager::start(tcp_config(dir, "near", kHb, kTimeout));
  REQUIRE(near.ok());
  auto c = connect_to_remote(**near, far);
  const auto t0 = Clock::now();
  far.stop();
  // Silence is the only rule left: dead after peer_timeout, never sooner.
  REQUIRE(c->wait_down(Deadline::after(20s)) == Errc::kOk);
  const double ms = ms_since(t0);
  CHECK(c->state() == OobState::kPeerDead);
  WARN("a stopped peer of another host declared dead by silence after " << ms << " ms");
  CHECK(ms >= std::chrono::duration<double, std::milli>(kTimeout - 2 * kHb).count());
  far.signal(SIGCONT);
}
