// Wait modes through VIPL (paper 004 sect. 3.3): the WaitMode of
// VipClanSetNicAttributes and VipClanSetViAttributes round-trips, bad values
// are refused, and messages go through VipRecvWait, VipSendWait and
// VipCQWait in every mode.
#include <catch2/catch.hpp>

#include "tests/via/via_test_util.hpp"

using namespace via_test;

namespace {

struct Pair {
  RuntimeDir dir;
  Node server, client;
  VIP_VI_HANDLE svi = nullptr, cvi = nullptr;
  explicit Pair(VIP_CQ_HANDLE* rcq = nullptr) {
    REQUIRE(server.open("srv"));
    REQUIRE(client.open("cli"));
    auto sa = vi_attributes(server.ptag, VIP_SERVICE_RELIABLE_DELIVERY);
    auto ca = vi_attributes(client.ptag, VIP_SERVICE_RELIABLE_DELIVERY);
    if (rcq) REQUIRE(VipCreateCQ(server.nic, 64, rcq) == VIP_SUCCESS);
    REQUIRE(VipCreateVi(server.nic, &sa, nullptr, rcq ? *rcq : nullptr, &svi) == VIP_SUCCESS);
    REQUIRE(VipCreateVi(client.nic, &ca, nullptr, nullptr, &cvi) == VIP_SUCCESS);
  }
  void connect() { REQUIRE(connect_pair(server, svi, cvi, "srv")); }
  // One message client -> server, waited for with VipRecvWait (or, with a
  // CQ, VipCQWait first) and VipSendWait.
  void round(int r, VIP_CQ_HANDLE cq = nullptr) {
    REQUIRE(VipPostRecv(svi, server.make(r % 8, 64), server.mh) == VIP_SUCCESS);
    REQUIRE(VipPostSend(cvi, client.make(r % 8, 8), client.mh) == VIP_SUCCESS);
    if (cq) {
      VIP_VI_HANDLE vi = nullptr;
      VIP_BOOLEAN recv = VIP_FALSE;
      REQUIRE(VipCQWait(cq, 5000, &vi, &recv) == VIP_SUCCESS);
      CHECK(vi == svi);
      CHECK(recv == VIP_TRUE);
    }
    VIP_DESCRIPTOR* out = nullptr;
    REQUIRE(VipRecvWait(svi, 5000, &out) == VIP_SUCCESS);
    REQUIRE(VipSendWait(cvi, 5000, &out) == VIP_SUCCESS);
  }
};

VIP_CLAN_NIC_ATTRIBUTES query(VIP_NIC_HANDLE nic) {
  VIP_CLAN_NIC_ATTRIBUTES a{};
  REQUIRE(VipClanQueryNicAttributes(nic, &a) == VIP_SUCCESS);
  return a;
}

void set_nic_mode(VIP_NIC_HANDLE nic, VIP_UINT32 mode) {
  VIP_CLAN_NIC_ATTRIBUTES a = query(nic);
  a.WaitMode = mode;
  REQUIRE(VipClanSetNicAttributes(nic, &a) == VIP_SUCCESS);
}

}  // namespace

TEST_CASE("VIPL: a NIC's wait mode round-trips, and a bad one is refused", "[via][wait_mode]") {
  RuntimeDir dir;
  Node n;
  REQUIRE(n.open("nic"));
  const VIP_CLAN_NIC_ATTRIBUTES defaults = query(n.nic);
  CHECK(defaults.RevokeOnCompletion == VIP_TRUE);
  CHECK(defaults.MappingCacheEntries == 16);
  CHECK(defaults.WaitMode == VIP_CLAN_WAIT_DEFAULT);
  for (VIP_UINT32 mode : {VIP_CLAN_WAIT_POLL, VIP_CLAN_WAIT_BLOCK, VIP_CLAN_WAIT_ADAPTIVE, VIP_CLAN_WAIT_DEFAULT}) {
    VIP_CLAN_NIC_ATTRIBUTES a{VIP_FALSE, 8, mode};
    REQUIRE(VipClanSetNicAttributes(n.nic, &a) == VIP_SUCCESS);
    const VIP_CLAN_NIC_ATTRIBUTES back = query(n.nic);
    CHECK(back.RevokeOnCompletion == VIP_FALSE);
    CHECK(back.MappingCacheEntries == 8);
    CHECK(back.WaitMode == mode);
  }
  VIP_CLAN_NIC_ATTRIBUTES bad{VIP_TRUE, 16, VIP_CLAN_WAIT_BLOCK + 1};
  CHECK(VipClanSetNicAttributes(n.nic, &bad) == VIP_INVALID_PARAMETER);
  CHECK(query(n.nic).MappingCacheEntries == 8);  // unchanged
  CHECK(VipClanQueryNicAttributes(n.nic, nullptr) == VIP_INVALID_PARAMETER);
}

TEST_CASE("VIPL: a VI's wait mode round-trips, and a bad one is refused", "[via][wait_mode]") {
  Pair p;
  VIP_CLAN_VI_ATTRIBUTES a{};
  REQUIRE(VipClanQueryViAttributes(p.svi, &a) == VIP_SUCCESS);
  CHECK(a.WaitMode == VIP_CLAN_WAIT_DEFAULT);
  a.WaitMode = VIP_CLAN_WAIT_POLL;
  REQUIRE(VipClanSetViAttributes(p.svi, &a) == VIP_SUCCESS);
  VIP_CLAN_VI_ATTRIBUTES back{};
  REQUIRE(VipClanQueryViAttributes(p.svi, &back) == VIP_SUCCESS);
  CHECK(back.WaitMode == VIP_CLAN_WAIT_POLL);
  a.WaitMode = VIP_CLAN_WAIT_BLOCK + 1;
  CHECK(VipClanSetViAttributes(p.svi, &a) == VIP_INVALID_PARAMETER);
  REQUIRE(VipClanQueryViAttributes(p.svi, &back) == VIP_SUCCESS);
  CHECK(back.WaitMode == VIP_CLAN_WAIT_POLL);
}

TEST_CASE("VIPL: messages go through every wait mode, set on the NIC or the VI", "[via][wait_mode]") {
  for (VIP_UINT32 mode : {VIP_CLAN_WAIT_POLL, VIP_CLAN_WAIT_BLOCK, VIP_CLAN_WAIT_ADAPTIVE}) {
    INFO("mode " << mode);
    {
      INFO("the NIC's");
      Pair p;
      set_nic_mode(p.server.nic, mode);
      set_nic_mode(p.client.nic, mode);
      p.connect();
      for (int r = 0; r < 20; ++r) p.round(r);
    }
    {
      INFO("the VI's, over a NIC that says otherwise");
      Pair p;
      set_nic_mode(p.server.nic, mode == VIP_CLAN_WAIT_BLOCK ? VIP_CLAN_WAIT_POLL : VIP_CLAN_WAIT_BLOCK);
      for (VIP_VI_HANDLE vi : {p.svi, p.cvi}) {
        VIP_CLAN_VI_ATTRIBUTES a{};
        REQUIRE(VipClanQueryViAttributes(vi, &a) == VIP_SUCCESS);
        a.WaitMode = mode;
        REQUIRE(VipClanSetViAttributes(vi, &a) == VIP_SUCCESS);
      }
      p.connect();
      for (int r = 0; r < 20; ++r) p.round(r);
    }
    {
      INFO("VipCQWait in the NIC's");
      VIP_CQ_HANDLE cq = nullptr;
      Pair p(&cq);
      set_nic_mode(p.server.nic, mode);
      p.connect();
      for (int r = 0; r < 20; ++r) p.round(r, cq);
    }
  }
}
