// The data path's caches and rings: what they remember must not outlive what
// it stands for. A registration removed, a handle destroyed, queues deeper
// than a ring's first size, the transfer queue wrapping many times over with
// its read pointer published lazily.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "tests/via/via_test_util.hpp"

using namespace via_test;

namespace {

struct Pair : ViPair {
  Pair() {
    REQUIRE(open("fsrv", "fcli"));
    REQUIRE(connect());
  }
};

}  // namespace

TEST_CASE("the transfer queue wraps many times: every message arrives, in order",
          "[via][fastpath]") {
  Pair p;
  // Several times the 512-slot ring, one message at a time and in bursts.
  constexpr int kMessages = 3000;
  constexpr int kPosted = 16;
  for (int k = 0; k < kPosted; ++k) {
    REQUIRE(VipPostRecv(p.svi, p.server.make(k, 64), p.server.mh) == VIP_SUCCESS);
  }
  int sent = 0, received = 0;
  while (received < kMessages) {
    // A burst of up to kPosted sends, from distinct buffers.
    const int burst = std::min(1 + received % kPosted, kMessages - sent);
    for (int b = 0; b < burst; ++b, ++sent) {
      auto* d = p.client.make(32 + b, 8, VIP_CONTROL_IMMEDIATE, static_cast<uint32_t>(sent));
      std::memcpy(p.client.buffer(32 + b), &sent, sizeof sent);
      REQUIRE(VipPostSend(p.cvi, d, p.client.mh) == VIP_SUCCESS);
    }
    for (int b = 0; b < burst; ++b, ++received) {
      VIP_DESCRIPTOR* d = nullptr;
      REQUIRE(VipRecvWait(p.svi, 5000, &d) == VIP_SUCCESS);
      REQUIRE(d->CS.ImmediateData == static_cast<uint32_t>(received));
      const size_t slot = (reinterpret_cast<unsigned char*>(d) - p.server.mem) / 64;
      int got = -1;
      std::memcpy(&got, p.server.buffer(slot), sizeof got);
      REQUIRE(got == received);
      REQUIRE(VipPostRecv(p.svi, p.server.make(slot, 64), p.server.mh) == VIP_SUCCESS);
      VIP_DESCRIPTOR* s = nullptr;
      REQUIRE(VipSendWait(p.cvi, 5000, &s) == VIP_SUCCESS);
    }
  }
}

TEST_CASE("completions queue up past the rings' first size, reaped in order", "[via][fastpath]") {
  Pair p;
  constexpr int kDepth = 40;  // beyond a fresh ring's 8 entries
  for (int k = 0; k < kDepth; ++k) {
    REQUIRE(VipPostRecv(p.svi, p.server.make(k, 64), p.server.mh) == VIP_SUCCESS);
  }
  for (int k = 0; k < kDepth; ++k) {
    auto* d = p.client.make(k, 4, VIP_CONTROL_IMMEDIATE, static_cast<uint32_t>(k));
    REQUIRE(VipPostSend(p.cvi, d, p.client.mh) == VIP_SUCCESS);
  }
  for (int k = 0; k < kDepth; ++k) {
    VIP_DESCRIPTOR* s = nullptr;
    REQUIRE(VipSendWait(p.cvi, 5000, &s) == VIP_SUCCESS);
    CHECK(s == p.client.desc(k));
  }
  for (int k = 0; k < kDepth; ++k) {
    VIP_DESCRIPTOR* d = nullptr;
    REQUIRE(VipRecvWait(p.svi, 5000, &d) == VIP_SUCCESS);
    CHECK(d == p.server.desc(k));
    CHECK(d->CS.ImmediateData == static_cast<uint32_t>(k));
  }
}

TEST_CASE("a deregistered memory handle is refused at once, though just used",
          "[via][fastpath]") {
  Pair p;
  VIP_MEM_ATTRIBUTES ma{p.client.ptag, VIP_FALSE, VIP_FALSE};
  VIP_MEM_HANDLE extra = 0;
  unsigned char* buf = p.client.buffer(40);
  REQUIRE(VipRegisterMem(p.client.nic, buf, 4096, &ma, &extra) == VIP_SUCCESS);
  REQUIRE(VipPostRecv(p.svi, p.server.make(0, 64), p.server.mh) == VIP_SUCCESS);
  auto* d = p.client.make(1, 8);
  d->DS[0].Local.Data.Address = buf;
  d->DS[0].Local.Handle = extra;
  REQUIRE(VipPostSend(p.cvi, d, p.client.mh) == VIP_SUCCESS);  // now remembered
  VIP_DESCRIPTOR* out = nullptr;
  REQUIRE(VipSendWait(p.cvi, 5000, &out) == VIP_SUCCESS);
  REQUIRE(VipRecvWait(p.svi, 5000, &out) == VIP_SUCCESS);

  REQUIRE(VipDeregisterMem(p.client.nic, buf, extra) == VIP_SUCCESS);
  d = p.client.make(1, 8);
  d->DS[0].Local.Data.Address = buf;
  d->DS[0].Local.Handle = extra;
  CHECK(VipPostSend(p.cvi, d, p.client.mh) == VIP_DESCRIPTOR_ERROR);
  CHECK((d->CS.Status & VIP_STATUS_PROTECTION_ERROR) != 0);
  // The descriptor's own memory, deregistered: the call is refused.
  REQUIRE(VipDeregisterMem(p.client.nic, p.client.mem, p.client.mh) == VIP_SUCCESS);
  CHECK(VipPostSend(p.cvi, p.client.make(2, 8), p.client.mh) == VIP_INVALID_PARAMETER);
}

TEST_CASE("a destroyed VI's handle is refused at once, though just used", "[via][fastpath]") {
  RuntimeDir dir;
  Node n;
  REQUIRE(n.open("fh"));
  auto a = vi_attributes(n.ptag);
  VIP_VI_HANDLE vi = nullptr;
  REQUIRE(VipCreateVi(n.nic, &a, nullptr, nullptr, &vi) == VIP_SUCCESS);
  VIP_DESCRIPTOR* d = nullptr;
  CHECK(VipRecvDone(vi, &d) == VIP_NOT_DONE);  // the handle is now remembered
  REQUIRE(VipDestroyVi(vi) == VIP_SUCCESS);
  CHECK(VipRecvDone(vi, &d) == VIP_INVALID_PARAMETER);
  CHECK(VipPostRecv(vi, n.make(0, 64), n.mh) == VIP_INVALID_PARAMETER);
}
