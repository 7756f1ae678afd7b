// VIs on two hosts: the connection handshake carries each NIC's locator,
// each side links its wire to the other's, and sends and receives go over
// the wire (clan_emul/wire/). The echo side runs in a forked child posing
// as another host (tests/support/other_host.hpp).
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <cstring>
#include <optional>
#include <string>

#include "support/child_process.hpp"
#include "support/other_host.hpp"
#include "tests/via/via_test_util.hpp"

using namespace via_test;

namespace {

// Every NIC opened while it lives has a wire on 127.0.0.1.
struct WireEnvironment {
  WireEnvironment() { setenv("CLAN_WIRE_LISTEN", "127.0.0.1:0", 1); }
  ~WireEnvironment() { unsetenv("CLAN_WIRE_LISTEN"); }
};

// The NIC's wire and its node's tcp listener on 127.0.0.1, from its config.
VIP_CLAN_NIC_CONFIG listening_on_loopback() {
  VIP_CLAN_NIC_CONFIG c{};
  c.Frames = 1024;
  c.RemapNs = 20000;
  c.Replacement = VIP_CLAN_REPLACEMENT_RANDOM;
  c.WireListen = "127.0.0.1:0";
  c.WireProvider = "tcp";
  c.OobListen = "127.0.0.1:0";
  return c;
}

// Echoes `messages` messages to one VI. With `config`, the NIC is opened
// with it, and the child runs in a runtime directory of its own: only its
// node's tcp listener, whose port it puts in `ready`, reaches it.
// With `done`, it disconnects only once the parent says it has every echo.
int echo_on_other_host(clan::test::Pipe& ready, int messages, const VIP_CLAN_NIC_CONFIG* config = nullptr,
                       clan::test::Pipe* done = nullptr) {
  if (int e = clan::test::become_other_host(); e != 0) return e;
  std::optional<RuntimeDir> own_dir;
  if (config) own_dir.emplace();
  Node n;
  if (!n.open("echo", config)) return 10;
  VIP_UINT16 oob_port = 0;
  if (VipClanQueryNicOobPort(n.nic, &oob_port) != VIP_SUCCESS || (config && oob_port == 0)) return 17;
  VIP_VI_HANDLE vi = nullptr;
  auto a = vi_attributes(n.ptag);
  if (VipCreateVi(n.nic, &a, nullptr, nullptr, &vi) != VIP_SUCCESS) return 11;
  for (int i = 0; i < 4; ++i) VipPostRecv(vi, n.make(i, 8192), n.mh);
  Address local("echo", "e");
  Address out("", "");
  VIP_VI_ATTRIBUTES ra{};
  VIP_CONN_HANDLE c = nullptr;
  VipConnectWait(n.nic, local.get(), 0, out.get(), &ra, &c);  // starts listening
  if (config) {
    ready.put(oob_port);
  } else {
    ready.put('r');
  }
  if (VipConnectWait(n.nic, local.get(), 20000, out.get(), &ra, &c) != VIP_SUCCESS) return 12;
  if (VipConnectAccept(c, vi) != VIP_SUCCESS) return 13;
  for (int i = 0; i < messages; ++i) {
    VIP_DESCRIPTOR* r = nullptr;
    if (VipRecvWait(vi, 20000, &r) != VIP_SUCCESS) return 14;
    const size_t slot = static_cast<size_t>(r - n.desc(0));
    const uint32_t len = r->CS.Length;
    std::memcpy(n.buffer(10), n.buffer(slot), len);
    VipPostRecv(vi, n.make(slot, 8192), n.mh);
    VIP_DESCRIPTOR* s = nullptr;
    if (VipPostSend(vi, n.make(10, len), n.mh) != VIP_SUCCESS) return 15;
    if (VipSendWait(vi, 20000, &s) != VIP_SUCCESS) return 16;
  }
  char token;
  if (done && !done->get(token)) return 18;
  VipDisconnect(vi);
  return 0;
}

// Connects a VI of `n` to the echoing VI at host address `echo` and checks
// `messages` echoes.
void exchange_with_echo(Node& n, const char* echo, int messages) {
  VIP_VI_HANDLE vi = nullptr;
  auto a = vi_attributes(n.ptag);
  REQUIRE(VipCreateVi(n.nic, &a, nullptr, nullptr, &vi) == VIP_SUCCESS);
  REQUIRE(VipPostRecv(vi, n.make(0, 8192), n.mh) == VIP_SUCCESS);
  Address local("", "p");
  Address remote(echo, "e");
  VIP_VI_ATTRIBUTES ra{};
  REQUIRE(VipConnectRequest(vi, local.get(), remote.get(), 20000, &ra) == VIP_SUCCESS);
  for (int i = 0; i < messages; ++i) {
    const std::string msg = "ping " + std::to_string(i) + std::string(static_cast<size_t>(i) * 27 % 8000, 'y');
    std::memcpy(n.buffer(1), msg.data(), msg.size());
    REQUIRE(VipPostSend(vi, n.make(1, static_cast<uint32_t>(msg.size())), n.mh) == VIP_SUCCESS);
    VIP_DESCRIPTOR* r = nullptr;
    REQUIRE(VipRecvWait(vi, 20000, &r) == VIP_SUCCESS);
    REQUIRE(r->CS.Length == msg.size());
    REQUIRE(std::memcmp(n.buffer(0), msg.data(), msg.size()) == 0);
    REQUIRE(VipSendWait(vi, 20000, &r) == VIP_SUCCESS);
    // After the last echo the peer disconnects: nothing more to receive.
    if (i + 1 < messages) REQUIRE(VipPostRecv(vi, n.make(0, 8192), n.mh) == VIP_SUCCESS);
  }
}

}  // namespace

TEST_CASE("VIs on two hosts exchange messages over the wire", "[via][wire][multiprocess]") {
  RuntimeDir dir;
  WireEnvironment wired;
  constexpr int kMessages = 300;
  clan::test::Pipe ready;
  clan::test::ChildProcess child([&] { return echo_on_other_host(ready, kMessages); });
  char token;
  REQUIRE(ready.get(token));
  Node n;
  REQUIRE(n.open("parent"));
  exchange_with_echo(n, "echo", kMessages);
  CHECK(child.wait() == 0);
}

TEST_CASE("a NIC opened with WireListen and OobListen is reached as NAME@HOST:PORT from another host",
          "[via][wire][multiprocess]") {
  RuntimeDir dir;
  constexpr int kMessages = 100;
  const VIP_CLAN_NIC_CONFIG config = listening_on_loopback();
  clan::test::Pipe ready, done;
  clan::test::ChildProcess child([&] { return echo_on_other_host(ready, kMessages, &config, &done); });
  VIP_UINT16 echo_port = 0;
  REQUIRE(ready.get(echo_port));
  REQUIRE(echo_port != 0);
  Node n;
  REQUIRE(n.open("parent", &config));
  const std::string echo = "echo@127.0.0.1:" + std::to_string(echo_port);
  exchange_with_echo(n, echo.c_str(), kMessages);
  done.put('d');
  CHECK(child.wait() == 0);
}

TEST_CASE("VipClanQueryNicOobPort: the tcp listener's port, 0 without one", "[via][wire]") {
  RuntimeDir dir;
  Node listening, local_only;
  const VIP_CLAN_NIC_CONFIG config = listening_on_loopback();
  REQUIRE(listening.open("listening", &config));
  REQUIRE(local_only.open("local-only"));
  VIP_UINT16 port = 0;
  REQUIRE(VipClanQueryNicOobPort(listening.nic, &port) == VIP_SUCCESS);
  CHECK(port != 0);
  REQUIRE(VipClanQueryNicOobPort(local_only.nic, &port) == VIP_SUCCESS);
  CHECK(port == 0);
  CHECK(VipClanQueryNicOobPort(listening.nic, nullptr) == VIP_INVALID_PARAMETER);
  CHECK(VipClanQueryNicOobPort(nullptr, &port) == VIP_INVALID_PARAMETER);
}

TEST_CASE("a NIC whose OobListen is not an address of this host does not open", "[via][wire]") {
  RuntimeDir dir;
  VIP_CLAN_NIC_CONFIG config = listening_on_loopback();
  config.WireListen = nullptr;
  config.OobListen = "192.0.2.1:0";  // TEST-NET-1: never this host's
  VIP_NIC_HANDLE nic = nullptr;
  CHECK(VipClanOpenNic("elsewhere", &config, &nic) != VIP_SUCCESS);
}
