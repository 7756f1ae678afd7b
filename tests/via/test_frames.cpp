// A NIC with fewer frames than connected VIs (paper 004 sect. 4): every VI
// keeps its messages, in order and intact, while the NIC re-maps their
// channels on demand; VipClanOpenNic's checks.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "tests/via/via_test_util.hpp"

using namespace via_test;

TEST_CASE("VipClanOpenNic refuses a resident set it cannot have", "[via][frames]") {
  RuntimeDir dir;
  VIP_NIC_HANDLE nic = nullptr;
  VIP_CLAN_NIC_CONFIG c{};
  c.Frames = 0;
  CHECK(VipClanOpenNic("f0", &c, &nic) == VIP_INVALID_PARAMETER);
  c = VIP_CLAN_NIC_CONFIG{4, 1'000'000'001, VIP_CLAN_REPLACEMENT_LRU, nullptr, nullptr, nullptr};
  CHECK(VipClanOpenNic("f1", &c, &nic) == VIP_INVALID_PARAMETER);
  c = VIP_CLAN_NIC_CONFIG{4, 0, VIP_CLAN_REPLACEMENT_LRU + 1, nullptr, nullptr, nullptr};
  CHECK(VipClanOpenNic("f2", &c, &nic) == VIP_INVALID_PARAMETER);
  CHECK(VipClanOpenNic("f3", nullptr, nullptr) == VIP_INVALID_PARAMETER);
  REQUIRE(VipClanOpenNic("f4", nullptr, &nic) == VIP_SUCCESS);
  CHECK(VipCloseNic(nic) == VIP_SUCCESS);
}

TEST_CASE("three VIs on a NIC of one frame each get every message, re-mapped on demand",
          "[via][frames]") {
  const uint32_t replacement = GENERATE(VIP_CLAN_REPLACEMENT_LRU, VIP_CLAN_REPLACEMENT_RANDOM);
  RuntimeDir dir;
  Node server, client;
  const VIP_CLAN_NIC_CONFIG one_frame{1, 1000, replacement, nullptr, nullptr, nullptr};
  REQUIRE(server.open("srv", &one_frame));
  REQUIRE(client.open("cli"));
  constexpr int kVis = 3, kRounds = 20;
  VIP_VI_HANDLE svi[kVis], cvi[kVis];
  for (int i = 0; i < kVis; ++i) {
    auto sa = vi_attributes(server.ptag);
    auto ca = vi_attributes(client.ptag);
    REQUIRE(VipCreateVi(server.nic, &sa, nullptr, nullptr, &svi[i]) == VIP_SUCCESS);
    REQUIRE(VipCreateVi(client.nic, &ca, nullptr, nullptr, &cvi[i]) == VIP_SUCCESS);
    REQUIRE(connect_pair(server, svi[i], cvi[i], "srv", "d" + std::to_string(i)));
  }
  // Round robin: each message is for another VI than the last, so each
  // finds its channel evicted by the one before.
  for (int round = 0; round < kRounds; ++round) {
    for (int i = 0; i < kVis; ++i) {
      INFO("round " << round << ", VI " << i);
      const size_t at = static_cast<size_t>(i);
      REQUIRE(VipPostRecv(svi[i], server.make(at, 4096), server.mh) == VIP_SUCCESS);
      const std::string msg = "vi " + std::to_string(i) + " round " + std::to_string(round);
      std::memcpy(client.buffer(10 + at), msg.data(), msg.size());
      auto* d = client.make(10 + at, static_cast<uint32_t>(msg.size()));
      REQUIRE(VipPostSend(cvi[i], d, client.mh) == VIP_SUCCESS);
      VIP_DESCRIPTOR* done = nullptr;
      REQUIRE(VipSendWait(cvi[i], 5000, &done) == VIP_SUCCESS);
      REQUIRE(VipRecvWait(svi[i], 5000, &done) == VIP_SUCCESS);
      CHECK(done->CS.Length == msg.size());
      CHECK(std::string(reinterpret_cast<char*>(server.buffer(at)), msg.size()) == msg);
    }
  }
  VIP_CLAN_NIC_STATS s{};
  REQUIRE(VipClanQueryNicStats(server.nic, &s) == VIP_SUCCESS);
  CHECK(s.Remaps > 0);
  CHECK(s.Evictions > 0);
  // VipCloseNic (the Nodes' destructors) takes the VIs down.
}
