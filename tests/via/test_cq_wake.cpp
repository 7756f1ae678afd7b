// VipClanCQWake: a thread blocked in VipCQWait returns VIP_NOT_DONE; a wake
// with nobody waiting is kept for the next caller, once per call.
#include <catch2/catch.hpp>

#include <future>

#include "tests/via/via_test_util.hpp"

using namespace via_test;

TEST_CASE("VipClanCQWake: wakes a blocked VipCQWait, which returns VIP_NOT_DONE", "[via][cq]") {
  RuntimeDir dir;
  Node n;
  REQUIRE(n.open("cqwake"));
  VIP_CQ_HANDLE cq = nullptr;
  REQUIRE(VipCreateCQ(n.nic, 16, &cq) == VIP_SUCCESS);
  auto waiter = std::async(std::launch::async, [cq] {
    VIP_VI_HANDLE vi = nullptr;
    VIP_BOOLEAN recv = VIP_FALSE;
    return VipCQWait(cq, VIP_INFINITE, &vi, &recv);
  });
  REQUIRE(VipClanCQWake(cq) == VIP_SUCCESS);
  CHECK(waiter.get() == VIP_NOT_DONE);
  REQUIRE(VipDestroyCQ(cq) == VIP_SUCCESS);
}

TEST_CASE("VipClanCQWake: a wake before the wait is kept, one per call", "[via][cq]") {
  RuntimeDir dir;
  Node n;
  REQUIRE(n.open("cqwake"));
  VIP_CQ_HANDLE cq = nullptr;
  REQUIRE(VipCreateCQ(n.nic, 16, &cq) == VIP_SUCCESS);
  REQUIRE(VipClanCQWake(cq) == VIP_SUCCESS);
  REQUIRE(VipClanCQWake(cq) == VIP_SUCCESS);
  VIP_VI_HANDLE vi = nullptr;
  VIP_BOOLEAN recv = VIP_FALSE;
  CHECK(VipCQWait(cq, 1000, &vi, &recv) == VIP_NOT_DONE);
  CHECK(VipCQWait(cq, 1000, &vi, &recv) == VIP_NOT_DONE);
  CHECK(VipCQWait(cq, 10, &vi, &recv) == VIP_TIMEOUT);
  CHECK(VipClanCQWake(nullptr) == VIP_INVALID_PARAMETER);
  REQUIRE(VipDestroyCQ(cq) == VIP_SUCCESS);
}
