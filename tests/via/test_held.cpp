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

namespace {

// A client with a VI to each of two servers' VIs on a NIC of one frame and
// a second's re-mapping (whichever of the two the client wrote to last holds
// the frame), and one to a server with frames to spare.
struct Held {
  RuntimeDir dir;
  Node slow, fast, client;
  VIP_VI_HANDLE s0 = nullptr, s1 = nullptr, f = nullptr, c0 = nullptr, c1 = nullptr, cf = nullptr;
  VIP_CQ_HANDLE cq = nullptr;  // c0's send CQ, if asked for (VipCloseNic frees it)
  explicit Held(bool c0_has_send_cq) {
    const VIP_CLAN_NIC_CONFIG one_frame{1, 1'000'000'000, VIP_CLAN_REPLACEMENT_LRU, nullptr, nullptr, nullptr};
    REQUIRE(slow.open("held-slow", &one_frame));
    REQUIRE(fast.open("held-fast"));
    REQUIRE(client.open("held-cli"));
    if (c0_has_send_cq) REQUIRE(VipCreateCQ(client.nic, 16, &cq) == VIP_SUCCESS);
    auto sa = vi_attributes(slow.ptag);
    auto fa = vi_attributes(fast.ptag);
    auto ca = vi_attributes(client.ptag);
    REQUIRE(VipCreateVi(slow.nic, &sa, nullptr, nullptr, &s0) == VIP_SUCCESS);
    REQUIRE(VipCreateVi(slow.nic, &sa, nullptr, nullptr, &s1) == VIP_SUCCESS);
    REQUIRE(VipCreateVi(fast.nic, &fa, nullptr, nullptr, &f) == VIP_SUCCESS);
    REQUIRE(VipCreateVi(client.nic, &ca, cq, nullptr, &c0) == VIP_SUCCESS);
    REQUIRE(VipCreateVi(client.nic, &ca, nullptr, nullptr, &c1) == VIP_SUCCESS);
    REQUIRE(VipCreateVi(client.nic, &ca, nullptr, nullptr, &cf) == VIP_SUCCESS);
    // Receives posted before connecting go with the connection.
    REQUIRE(VipPostRecv(s0, slow.make(0, 4096), slow.mh) == VIP_SUCCESS);
    REQUIRE(VipPostRecv(s1, slow.make(1, 4096), slow.mh) == VIP_SUCCESS);
    REQUIRE(VipPostRecv(f, fast.make(2, 4096), fast.mh) == VIP_SUCCESS);
    REQUIRE(connect_pair(slow, s0, c0, "held-slow", "d0"));
    // s1's connection takes the frame from s0 (the client's handshake
    // writes into s1's channel are held until it is resident).
    REQUIRE(connect_pair(slow, s1, c1, "held-slow", "d1"));
    REQUIRE(connect_pair(fast, f, cf, "held-fast", "d2"));
  }
  // s0 is on the host: the send is held, and VipPostSend returns; the
  // client's other work goes on while s0 is made resident.
  void send_held_then_other() {
    REQUIRE(VipPostSend(c0, message(client, 10, "to the host"), client.mh) == VIP_SUCCESS);
    REQUIRE(VipPostSend(cf, message(client, 11, "meanwhile"), client.mh) == VIP_SUCCESS);
    VIP_DESCRIPTOR* done = nullptr;
    REQUIRE(VipSendWait(cf, 10000, &done) == VIP_SUCCESS);
    REQUIRE(VipRecvWait(f, 10000, &done) == VIP_SUCCESS);
    CHECK(received(fast, 2, done) == "meanwhile");
    // The re-mapping of s0 takes a second: its message is not there yet.
    CHECK(VipRecvDone(s0, &done) == VIP_NOT_DONE);
  }

  // Retried, not dropped: it lands intact once s0 is resident.
  void held_message_lands() {
    VIP_DESCRIPTOR* done = nullptr;
    REQUIRE(VipRecvWait(s0, 10000, &done) == VIP_SUCCESS);
    CHECK(received(slow, 0, done) == "to the host");
    VIP_CLAN_NIC_STATS st{};
    REQUIRE(VipClanQueryNicStats(slow.nic, &st) == VIP_SUCCESS);
    CHECK(st.Remaps >= 2);
  }
};

}  // namespace

TEST_CASE("a send held for a non-resident peer leaves the sender free for its other VIs, and lands",
          "[via][frames]") {
  Held h(false);
  h.send_held_then_other();
  VIP_DESCRIPTOR* done = nullptr;
  REQUIRE(VipSendWait(h.c0, 10000, &done) == VIP_SUCCESS);
  CHECK(done->CS.Status == (VIP_STATUS_DONE | VIP_STATUS_OP_SEND));
  h.held_message_lands();
}

TEST_CASE("a held send completes for a thread waiting only on its completion queue",
          "[via][frames]") {
  Held h(true);
  // The connection's own events are consumed first: the CQ holds none when
  // the send is held, so only the VI's becoming held can tell its waiter.
  VIP_VI_HANDLE vi = nullptr;
  VIP_BOOLEAN recv = VIP_TRUE;
  CHECK(VipCQDone(h.cq, &vi, &recv) == VIP_NOT_DONE);
  h.send_held_then_other();
  REQUIRE(VipCQWait(h.cq, 10000, &vi, &recv) == VIP_SUCCESS);
  CHECK(vi == h.c0);
  CHECK(recv == VIP_FALSE);
  VIP_DESCRIPTOR* done = nullptr;
  REQUIRE(VipSendDone(h.c0, &done) == VIP_SUCCESS);
  CHECK(done->CS.Status == (VIP_STATUS_DONE | VIP_STATUS_OP_SEND));
  h.held_message_lands();
}
