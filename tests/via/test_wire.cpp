// VIs on two hosts: the connection handshake carries each NIC's locator,
// each side links its wire to the other's, and sends and receives go over
// the wire (clan_emul/wire/). The echo side runs in a forked child posing
// as another host (tests/support/other_host.hpp).
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <cstring>
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

int echo_on_other_host(clan::test::Pipe& ready, int messages) {
  if (int e = clan::test::become_other_host(); e != 0) return e;
  Node n;
  if (!n.open("echo")) return 10;
  VIP_VI_HANDLE vi = nullptr;
  auto a = vi_attributes(n.ptag);
  if (VipCreateVi(n.nic, &a, nullptr, nullptr, &vi) != VIP_SUCCESS) return 11;
  for (int i = 0; i < 4; ++i) VipPostRecv(vi, n.make(i, 8192), n.mh);
  Address local("echo", "e");
  Address out("", "");
  VIP_VI_ATTRIBUTES ra{};
  VIP_CONN_HANDLE c = nullptr;
  VipConnectWait(n.nic, local.get(), 0, out.get(), &ra, &c);  // starts listening
  ready.put('r');
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
  VipDisconnect(vi);
  return 0;
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
  VIP_VI_HANDLE vi = nullptr;
  auto a = vi_attributes(n.ptag);
  REQUIRE(VipCreateVi(n.nic, &a, nullptr, nullptr, &vi) == VIP_SUCCESS);
  REQUIRE(VipPostRecv(vi, n.make(0, 8192), n.mh) == VIP_SUCCESS);
  Address local("", "p");
  Address remote("echo", "e");
  VIP_VI_ATTRIBUTES ra{};
  REQUIRE(VipConnectRequest(vi, local.get(), remote.get(), 20000, &ra) == VIP_SUCCESS);
  for (int i = 0; i < kMessages; ++i) {
    const std::string msg = "ping " + std::to_string(i) + std::string(static_cast<size_t>(i) * 27 % 8000, 'y');
    std::memcpy(n.buffer(1), msg.data(), msg.size());
    REQUIRE(VipPostSend(vi, n.make(1, static_cast<uint32_t>(msg.size())), n.mh) == VIP_SUCCESS);
    VIP_DESCRIPTOR* r = nullptr;
    REQUIRE(VipRecvWait(vi, 20000, &r) == VIP_SUCCESS);
    REQUIRE(r->CS.Length == msg.size());
    REQUIRE(std::memcmp(n.buffer(0), msg.data(), msg.size()) == 0);
    REQUIRE(VipSendWait(vi, 20000, &r) == VIP_SUCCESS);
    // After the last echo the peer disconnects: nothing more to receive.
    if (i + 1 < kMessages) REQUIRE(VipPostRecv(vi, n.make(0, 8192), n.mh) == VIP_SUCCESS);
  }
  CHECK(child.wait() == 0);
}
