// VipConnectWait / Accept / Reject / Request / Disconnect: each outcome.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "tests/via/via_test_util.hpp"

using namespace via_test;

TEST_CASE("connection set-up: no match, reject, incompatible attributes, timeout", "[via][connect]") {
  RuntimeDir dir;
  Node s, c;
  REQUIRE(s.open("cs"));
  REQUIRE(c.open("cc"));
  auto sa = vi_attributes(s.ptag, VIP_SERVICE_UNRELIABLE);
  auto ca = vi_attributes(c.ptag, VIP_SERVICE_RELIABLE_DELIVERY);
  VIP_VI_HANDLE svi = nullptr, cvi = nullptr;
  REQUIRE(VipCreateVi(s.nic, &sa, nullptr, nullptr, &svi) == VIP_SUCCESS);
  REQUIRE(VipCreateVi(c.nic, &ca, nullptr, nullptr, &cvi) == VIP_SUCCESS);
  Address local("cs", "x"), cl("", "y"), out("", "");
  VIP_VI_ATTRIBUTES ra{};
  VIP_CONN_HANDLE conn = nullptr;
  // Nobody listens on that discriminator, nor on that node.
  Address nowhere("cs", "nobody"), ghost("ghost", "x");
  CHECK(VipConnectRequest(cvi, cl.get(), nowhere.get(), 2000, &ra) == VIP_NO_MATCH);
  CHECK(VipConnectRequest(cvi, cl.get(), ghost.get(), 2000, &ra) == VIP_NO_MATCH);
  CHECK(VipConnectRequest(cvi, cl.get(), nullptr, 2000, &ra) == VIP_INVALID_PARAMETER);
  Address wrong_host("other", "x");
  CHECK(VipConnectWait(s.nic, wrong_host.get(), 0, out.get(), &ra, &conn) == VIP_INVALID_PARAMETER);
  CHECK(VipConnectWait(s.nic, local.get(), 0, out.get(), &ra, &conn) == VIP_TIMEOUT);

  VIP_RETURN requested = VIP_SUCCESS;
  std::thread t([&] {
    VIP_VI_ATTRIBUTES r{};
    requested = VipConnectRequest(cvi, cl.get(), local.get(), 10000, &r);
  });
  REQUIRE(VipConnectWait(s.nic, local.get(), 10000, out.get(), &ra, &conn) == VIP_SUCCESS);
  CHECK(std::string(reinterpret_cast<char*>(out.get()->HostAddress), out.get()->HostAddressLen) == "cc");
  CHECK(ra.ReliabilityLevel == VIP_SERVICE_RELIABLE_DELIVERY);
  // Reliability levels differ: the request stays pending.
  CHECK(VipConnectAccept(conn, svi) == VIP_INVALID_RELIABILITY_LEVEL);
  auto mtu = sa;
  mtu.ReliabilityLevel = VIP_SERVICE_RELIABLE_DELIVERY;
  mtu.MaxTransferSize = 1000;
  REQUIRE(VipSetViAttributes(svi, &mtu) == VIP_SUCCESS);
  CHECK(VipConnectAccept(conn, svi) == VIP_INVALID_MTU);
  CHECK(VipConnectReject(conn) == VIP_SUCCESS);
  t.join();
  CHECK(requested == VIP_REJECT);
  CHECK(VipConnectReject(conn) == VIP_INVALID_PARAMETER);  // answered: the handle is gone

  // Compatible now: accepted; a connected VI cannot connect or accept again.
  mtu.MaxTransferSize = ca.MaxTransferSize;
  REQUIRE(VipSetViAttributes(svi, &mtu) == VIP_SUCCESS);
  REQUIRE(connect_pair(s, svi, cvi, "cs", "x2"));
  CHECK(VipSetViAttributes(svi, &mtu) == VIP_INVALID_STATE);
  CHECK(VipConnectRequest(cvi, cl.get(), local.get(), 100, &ra) == VIP_INVALID_STATE);
  CHECK(VipDestroyVi(cvi) == VIP_INVALID_STATE);
  // Orderly disconnect: the peer's posted receive is flushed, it goes to Error.
  REQUIRE(VipPostRecv(svi, s.make(0, 64), s.mh) == VIP_SUCCESS);
  REQUIRE(VipDisconnect(cvi) == VIP_SUCCESS);
  VIP_DESCRIPTOR* d = nullptr;
  REQUIRE(VipRecvWait(svi, 5000, &d) == VIP_DESCRIPTOR_ERROR);
  CHECK((d->CS.Status & VIP_STATUS_DESC_FLUSHED_ERROR) != 0);
  REQUIRE(VipDisconnect(svi) == VIP_SUCCESS);
  CHECK(VipDestroyVi(cvi) == VIP_SUCCESS);
  CHECK(VipDestroyVi(svi) == VIP_SUCCESS);
}

TEST_CASE("VipClanStopListening: requests are refused at once, a blocked VipConnectWait returns, "
          "listening can start again",
          "[via][connect]") {
  RuntimeDir dir;
  Node s, c;
  REQUIRE(s.open("ss"));
  REQUIRE(c.open("sc"));
  auto sa = vi_attributes(s.ptag, VIP_SERVICE_RELIABLE_DELIVERY);
  auto ca = vi_attributes(c.ptag, VIP_SERVICE_RELIABLE_DELIVERY);
  VIP_VI_HANDLE svi = nullptr, cvi = nullptr;
  REQUIRE(VipCreateVi(s.nic, &sa, nullptr, nullptr, &svi) == VIP_SUCCESS);
  REQUIRE(VipCreateVi(c.nic, &ca, nullptr, nullptr, &cvi) == VIP_SUCCESS);
  Address local("ss", "x"), cl("", "y"), out("", ""), wrong_host("other", "x");
  VIP_VI_ATTRIBUTES ra{};
  VIP_CONN_HANDLE conn = nullptr;

  CHECK(VipClanStopListening(nullptr, local.get()) == VIP_INVALID_PARAMETER);
  CHECK(VipClanStopListening(s.nic, nullptr) == VIP_INVALID_PARAMETER);
  CHECK(VipClanStopListening(s.nic, wrong_host.get()) == VIP_INVALID_PARAMETER);
  CHECK(VipClanStopListening(s.nic, local.get()) == VIP_INVALID_STATE);  // not listening

  // Listening, with a request that nobody takes: stopping refuses it. (If the
  // stop comes first, the request finds nobody listening: refused as well.)
  // Either way it ends long before its 20 s timeout.
  REQUIRE(VipConnectWait(s.nic, local.get(), 0, out.get(), &ra, &conn) == VIP_TIMEOUT);
  VIP_RETURN requested = VIP_SUCCESS;
  std::thread requester([&] {
    VIP_VI_ATTRIBUTES r{};
    requested = VipConnectRequest(cvi, cl.get(), local.get(), 20000, &r);
  });
  CHECK(VipClanStopListening(s.nic, local.get()) == VIP_SUCCESS);
  requester.join();
  CHECK(requested == VIP_NO_MATCH);
  CHECK(VipClanStopListening(s.nic, local.get()) == VIP_INVALID_STATE);

  // A thread blocked in VipConnectWait returns when listening stops. Stop
  // until it has: a stop before its wait began would leave it listening anew.
  std::atomic<bool> waited{false};
  VIP_RETURN wait_result = VIP_SUCCESS;
  std::thread waiter([&] {
    Address o("", "");
    VIP_VI_ATTRIBUTES a{};
    VIP_CONN_HANDLE h = nullptr;
    wait_result = VipConnectWait(s.nic, local.get(), 20000, o.get(), &a, &h);
    waited = true;
  });
  while (!waited) {
    VipClanStopListening(s.nic, local.get());
    std::this_thread::yield();
  }
  waiter.join();
  CHECK(wait_result == VIP_ERROR_RESOURCE);

  // Listening again: a request is accepted as before.
  REQUIRE(connect_pair(s, svi, cvi, "ss", "x"));
  REQUIRE(VipDisconnect(cvi) == VIP_SUCCESS);
  REQUIRE(VipDisconnect(svi) == VIP_SUCCESS);
  CHECK(VipDestroyVi(cvi) == VIP_SUCCESS);
  CHECK(VipDestroyVi(svi) == VIP_SUCCESS);
}
