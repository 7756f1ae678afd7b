// A send to a VI whose endpoint is on the host (paper 004 sect. 3.2): held
// and retried, never dropped, and the sending thread's other VIs go on
// meanwhile instead of waiting for the re-mapping.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "tests/via/via_test_util.hpp"

using namespace via_test;

namespace {

VIP_DESCRIPTOR* message(Node& n, size_t at, const std::string& text) {
  std::memcpy(n.buffer(at), text.data(), text.size());
  return n.make(at, static_cast<uint32_t>(text.size()));
}

std::string received(Node& n, size_t at, const VIP_DESCRIPTOR* d) {
  return std::string(reinterpret_cast<const char*>(n.buffer(at)), d->CS.Length);
}

}  // namespace

TEST_CASE("a send held for a non-resident peer leaves the sender free for its other VIs, and lands",
          "[via][frames]") {
  RuntimeDir dir;
  Node slow, fast, client;
  // One frame and a re-mapping of a second: whichever of the two VIs the
  // client writes to last holds it, and the other waits that long for it.
  const VIP_CLAN_NIC_CONFIG one_frame{1, 1'000'000'000, VIP_CLAN_REPLACEMENT_LRU};
  REQUIRE(slow.open("held-slow", &one_frame));
  REQUIRE(fast.open("held-fast"));
  REQUIRE(client.open("held-cli"));
  VIP_VI_HANDLE s0, s1, f, c0, c1, cf;
  auto sa = vi_attributes(slow.ptag);
  auto fa = vi_attributes(fast.ptag);
  auto ca = vi_attributes(client.ptag);
  REQUIRE(VipCreateVi(slow.nic, &sa, nullptr, nullptr, &s0) == VIP_SUCCESS);
  REQUIRE(VipCreateVi(slow.nic, &sa, nullptr, nullptr, &s1) == VIP_SUCCESS);
  REQUIRE(VipCreateVi(fast.nic, &fa, nullptr, nullptr, &f) == VIP_SUCCESS);
  for (VIP_VI_HANDLE* c : {&c0, &c1, &cf}) {
    REQUIRE(VipCreateVi(client.nic, &ca, nullptr, nullptr, c) == VIP_SUCCESS);
  }
  // Receives posted before connecting go with the connection.
  REQUIRE(VipPostRecv(s0, slow.make(0, 4096), slow.mh) == VIP_SUCCESS);
  REQUIRE(VipPostRecv(s1, slow.make(1, 4096), slow.mh) == VIP_SUCCESS);
  REQUIRE(VipPostRecv(f, fast.make(2, 4096), fast.mh) == VIP_SUCCESS);
  REQUIRE(connect_pair(slow, s0, c0, "held-slow", "d0"));
  // s1's connection takes the frame from s0 (the client's handshake writes
  // into s1's channel are held until it is resident).
  REQUIRE(connect_pair(slow, s1, c1, "held-slow", "d1"));
  REQUIRE(connect_pair(fast, f, cf, "held-fast", "d2"));

  // s0 is on the host: the send is held, and VipPostSend returns.
  REQUIRE(VipPostSend(c0, message(client, 10, "to the host"), client.mh) == VIP_SUCCESS);
  // The client's other work goes on while s0 is made resident.
  REQUIRE(VipPostSend(cf, message(client, 11, "meanwhile"), client.mh) == VIP_SUCCESS);
  VIP_DESCRIPTOR* done = nullptr;
  REQUIRE(VipSendWait(cf, 10000, &done) == VIP_SUCCESS);
  REQUIRE(VipRecvWait(f, 10000, &done) == VIP_SUCCESS);
  CHECK(received(fast, 2, done) == "meanwhile");
  // The re-mapping of s0 takes a second: its message is not there yet.
  CHECK(VipRecvDone(s0, &done) == VIP_NOT_DONE);

  // Retried, not dropped: it lands intact once s0 is resident.
  REQUIRE(VipSendWait(c0, 10000, &done) == VIP_SUCCESS);
  CHECK(done->CS.Status == (VIP_STATUS_DONE | VIP_STATUS_OP_SEND));
  REQUIRE(VipRecvWait(s0, 10000, &done) == VIP_SUCCESS);
  CHECK(received(slow, 0, done) == "to the host");
  VIP_CLAN_NIC_STATS st{};
  REQUIRE(VipClanQueryNicStats(slow.nic, &st) == VIP_SUCCESS);
  CHECK(st.Remaps >= 2);
}
