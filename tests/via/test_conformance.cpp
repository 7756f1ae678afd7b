// One test per VIPL call group: the success path and each error code.
#include <catch2/catch.hpp>

#include <vector>

#include "tests/via/via_test_util.hpp"

using namespace via_test;

TEST_CASE("VipOpenNic, VipQueryNic, VipCloseNic", "[via][nic]") {
  RuntimeDir dir;
  VIP_NIC_HANDLE nic = nullptr;
  CHECK(VipOpenNic("nic-a", nullptr) == VIP_INVALID_PARAMETER);
  CHECK(VipOpenNic("bad name!", &nic) == VIP_INVALID_PARAMETER);
  REQUIRE(VipOpenNic("nic-a", &nic) == VIP_SUCCESS);
  VIP_NIC_HANDLE dup = nullptr;
  CHECK(VipOpenNic("nic-a", &dup) == VIP_ERROR_RESOURCE);  // the node name is taken
  VIP_NIC_ATTRIBUTES a;
  REQUIRE(VipQueryNic(nic, &a) == VIP_SUCCESS);
  CHECK(std::string(a.Name) == "nic-a");
  CHECK(a.ReliabilityLevelSupport == (VIP_SERVICE_UNRELIABLE | VIP_SERVICE_RELIABLE_DELIVERY |
                                      VIP_SERVICE_RELIABLE_RECEPTION));
  CHECK(a.MaxSegmentsPerDesc >= 2);
  CHECK(VipQueryNic(nic, nullptr) == VIP_INVALID_PARAMETER);
  CHECK(VipCloseNic(nic) == VIP_SUCCESS);
  CHECK(VipCloseNic(nic) == VIP_INVALID_PARAMETER);  // stale handle: an error, not a crash
  CHECK(VipQueryNic(nic, &a) == VIP_INVALID_PARAMETER);
}

TEST_CASE("VipCreatePtag, VipDestroyPtag", "[via][ptag]") {
  RuntimeDir dir;
  Node n, m;
  REQUIRE(n.open("p1"));
  REQUIRE(m.open("p2"));
  VIP_PROTECTION_HANDLE t = nullptr;
  CHECK(VipCreatePtag(n.nic, nullptr) == VIP_INVALID_PARAMETER);
  REQUIRE(VipCreatePtag(n.nic, &t) == VIP_SUCCESS);
  CHECK(VipDestroyPtag(m.nic, t) == VIP_INVALID_PTAG);  // another NIC's tag
  CHECK(VipDestroyPtag(n.nic, n.ptag) == VIP_INVALID_STATE);  // memory registered under it
  CHECK(VipDestroyPtag(n.nic, t) == VIP_SUCCESS);
  CHECK(VipDestroyPtag(n.nic, t) == VIP_INVALID_PTAG);
}

TEST_CASE("VipRegisterMem, VipQueryMem, VipDeregisterMem, VipClanAllocMem", "[via][mem]") {
  RuntimeDir dir;
  Node n, m;
  REQUIRE(n.open("m1"));
  REQUIRE(m.open("m2"));
  std::vector<char> plain(4096);
  VIP_MEM_ATTRIBUTES ma{n.ptag, VIP_FALSE, VIP_FALSE};
  VIP_MEM_HANDLE h = 0;
  // Any memory registers (sends, descriptors)...
  REQUIRE(VipRegisterMem(n.nic, plain.data(), plain.size(), &ma, &h) == VIP_SUCCESS);
  VIP_MEM_ATTRIBUTES q{};
  REQUIRE(VipQueryMem(n.nic, plain.data(), h, &q) == VIP_SUCCESS);
  CHECK(q.Ptag == n.ptag);
  CHECK(VipQueryMem(n.nic, plain.data() + 1, h, &q) == VIP_INVALID_PARAMETER);
  CHECK(VipDeregisterMem(n.nic, plain.data(), h + 1000) == VIP_INVALID_PARAMETER);
  CHECK(VipDeregisterMem(n.nic, plain.data(), h) == VIP_SUCCESS);
  CHECK(VipDeregisterMem(n.nic, plain.data(), h) == VIP_INVALID_PARAMETER);
  // ...under a tag of the same NIC only.
  VIP_MEM_ATTRIBUTES foreign{m.ptag, VIP_FALSE, VIP_FALSE};
  CHECK(VipRegisterMem(n.nic, plain.data(), plain.size(), &foreign, &h) == VIP_INVALID_PTAG);
  VIP_MEM_ATTRIBUTES none{nullptr, VIP_FALSE, VIP_FALSE};
  CHECK(VipRegisterMem(n.nic, plain.data(), plain.size(), &none, &h) == VIP_INVALID_PTAG);
  CHECK(VipRegisterMem(n.nic, plain.data(), 0, &ma, &h) == VIP_INVALID_PARAMETER);
  CHECK(VipRegisterMem(n.nic, nullptr, 10, &ma, &h) == VIP_INVALID_PARAMETER);
  // CLAN memory: allocate, free; in use while registered.
  void* p = nullptr;
  CHECK(VipClanAllocMem(n.nic, 0, &p) == VIP_INVALID_PARAMETER);
  REQUIRE(VipClanAllocMem(n.nic, 100, &p) == VIP_SUCCESS);
  std::memset(p, 0xab, 4096);  // page-rounded
  REQUIRE(VipRegisterMem(n.nic, p, 100, &ma, &h) == VIP_SUCCESS);
  CHECK(VipClanFreeMem(n.nic, p) == VIP_INVALID_STATE);
  CHECK(VipDeregisterMem(n.nic, p, h) == VIP_SUCCESS);
  CHECK(VipClanFreeMem(n.nic, p) == VIP_SUCCESS);
  CHECK(VipClanFreeMem(n.nic, p) == VIP_INVALID_PARAMETER);
}

TEST_CASE("VipCreateCQ, VipResizeCQ, VipDestroyCQ, VipCQDone, VipCQWait", "[via][cq]") {
  RuntimeDir dir;
  Node n;
  REQUIRE(n.open("cq1"));
  VIP_CQ_HANDLE cq = nullptr;
  CHECK(VipCreateCQ(n.nic, 0, &cq) == VIP_INVALID_PARAMETER);
  CHECK(VipCreateCQ(n.nic, 16, nullptr) == VIP_INVALID_PARAMETER);
  REQUIRE(VipCreateCQ(n.nic, 16, &cq) == VIP_SUCCESS);
  CHECK(VipResizeCQ(cq, 0) == VIP_INVALID_PARAMETER);
  CHECK(VipResizeCQ(cq, 64) == VIP_SUCCESS);
  VIP_VI_HANDLE vi = nullptr;
  VIP_BOOLEAN recv = VIP_FALSE;
  CHECK(VipCQDone(cq, &vi, &recv) == VIP_NOT_DONE);
  CHECK(VipCQWait(cq, 10, &vi, &recv) == VIP_TIMEOUT);
  CHECK(VipCQDone(cq, nullptr, &recv) == VIP_INVALID_PARAMETER);
  auto attrs = vi_attributes(n.ptag);
  REQUIRE(VipCreateVi(n.nic, &attrs, cq, cq, &vi) == VIP_SUCCESS);
  CHECK(VipDestroyCQ(cq) == VIP_INVALID_STATE);  // a VI uses it
  REQUIRE(VipDestroyVi(vi) == VIP_SUCCESS);
  CHECK(VipDestroyCQ(cq) == VIP_SUCCESS);
  CHECK(VipDestroyCQ(cq) == VIP_INVALID_PARAMETER);
  CHECK(VipResizeCQ(cq, 8) == VIP_INVALID_PARAMETER);
}

TEST_CASE("VipNSInit, VipNSGetHostByName, VipNSShutdown", "[via][ns]") {
  RuntimeDir dir;
  Node n;
  REQUIRE(n.open("ns1"));
  Address a("", "");
  char name[] = "some-host";
  CHECK(VipNSGetHostByName(n.nic, name, a.get(), 0) == VIP_ERROR_NAMESERVICE);  // before init
  REQUIRE(VipNSInit(n.nic, nullptr) == VIP_SUCCESS);
  REQUIRE(VipNSGetHostByName(n.nic, name, a.get(), 0) == VIP_SUCCESS);
  CHECK(a.get()->HostAddressLen == 9);
  CHECK(std::memcmp(a.get()->HostAddress, "some-host", 9) == 0);
  CHECK(VipNSGetHostByName(n.nic, name, a.get(), 1) == VIP_ERROR_NAMESERVICE);
  char bad[] = "no/such host";
  CHECK(VipNSGetHostByName(n.nic, bad, a.get(), 0) == VIP_ERROR_NAMESERVICE);
  CHECK(VipNSGetHostByName(n.nic, nullptr, a.get(), 0) == VIP_INVALID_PARAMETER);
  CHECK(VipNSShutdown(n.nic) == VIP_SUCCESS);
  CHECK(VipNSShutdown(n.nic) == VIP_ERROR_NAMESERVICE);
}

TEST_CASE("VipCreateVi, VipQueryVi, VipSetViAttributes, VipDestroyVi", "[via][vi]") {
  RuntimeDir dir;
  Node n, m;
  REQUIRE(n.open("vi1"));
  REQUIRE(m.open("vi2"));
  VIP_VI_HANDLE vi = nullptr;
  auto a = vi_attributes(n.ptag);
  SECTION("attribute errors") {
    auto bad = a;
    bad.ReliabilityLevel = 3;
    CHECK(VipCreateVi(n.nic, &bad, nullptr, nullptr, &vi) == VIP_INVALID_RELIABILITY_LEVEL);
    bad = a;
    bad.MaxTransferSize = 0;
    CHECK(VipCreateVi(n.nic, &bad, nullptr, nullptr, &vi) == VIP_INVALID_MTU);
    bad = a;
    int qos = 0;
    bad.QoS = &qos;
    CHECK(VipCreateVi(n.nic, &bad, nullptr, nullptr, &vi) == VIP_INVALID_QOS);
    bad = a;
    bad.Ptag = m.ptag;
    CHECK(VipCreateVi(n.nic, &bad, nullptr, nullptr, &vi) == VIP_INVALID_PTAG);
    bad = a;
    bad.EnableRdmaRead = VIP_TRUE;
    CHECK(VipCreateVi(n.nic, &bad, nullptr, nullptr, &vi) == VIP_INVALID_RDMAREAD);
    CHECK(VipCreateVi(n.nic, nullptr, nullptr, nullptr, &vi) == VIP_INVALID_PARAMETER);
    VIP_CQ_HANDLE foreign = nullptr;
    REQUIRE(VipCreateCQ(m.nic, 4, &foreign) == VIP_SUCCESS);
    CHECK(VipCreateVi(n.nic, &a, foreign, nullptr, &vi) == VIP_INVALID_PARAMETER);
  }
  SECTION("query, set, destroy") {
    REQUIRE(VipCreateVi(n.nic, &a, nullptr, nullptr, &vi) == VIP_SUCCESS);
    VIP_VI_STATE st;
    VIP_VI_ATTRIBUTES q;
    VIP_BOOLEAN se, re;
    REQUIRE(VipQueryVi(vi, &st, &q, &se, &re) == VIP_SUCCESS);
    CHECK(st == VIP_STATE_IDLE);
    CHECK(q.ReliabilityLevel == VIP_SERVICE_RELIABLE_DELIVERY);
    CHECK(se == VIP_TRUE);
    CHECK(re == VIP_TRUE);
    auto b = a;
    b.ReliabilityLevel = VIP_SERVICE_UNRELIABLE;
    REQUIRE(VipSetViAttributes(vi, &b) == VIP_SUCCESS);
    REQUIRE(VipQueryVi(vi, &st, &q, &se, &re) == VIP_SUCCESS);
    CHECK(q.ReliabilityLevel == VIP_SERVICE_UNRELIABLE);
    b.ReliabilityLevel = 7;
    CHECK(VipSetViAttributes(vi, &b) == VIP_INVALID_RELIABILITY_LEVEL);
    // Idle VI: no sends, no disconnect.
    VIP_DESCRIPTOR* d = n.make(0, 8);
    CHECK(VipPostSend(vi, d, n.mh) == VIP_INVALID_STATE);
    CHECK(VipDisconnect(vi) == VIP_INVALID_STATE);
    VIP_DESCRIPTOR* out = nullptr;
    CHECK(VipSendDone(vi, &out) == VIP_NOT_DONE);
    CHECK(VipRecvWait(vi, 10, &out) == VIP_INVALID_STATE);
    // A receive may be posted before the connection; the VI is then busy.
    REQUIRE(VipPostRecv(vi, n.make(1, 64), n.mh) == VIP_SUCCESS);
    CHECK(VipDestroyVi(vi) == VIP_INVALID_STATE);
    CHECK(VipDestroyPtag(n.nic, n.ptag) == VIP_INVALID_STATE);
  }
  SECTION("stale handles") {
    REQUIRE(VipCreateVi(n.nic, &a, nullptr, nullptr, &vi) == VIP_SUCCESS);
    REQUIRE(VipDestroyVi(vi) == VIP_SUCCESS);
    VIP_DESCRIPTOR* out = nullptr;
    CHECK(VipDestroyVi(vi) == VIP_INVALID_PARAMETER);
    CHECK(VipPostRecv(vi, n.make(1, 64), n.mh) == VIP_INVALID_PARAMETER);
    CHECK(VipRecvDone(vi, &out) == VIP_INVALID_PARAMETER);
    CHECK(VipPostSend(nullptr, n.make(0, 8), n.mh) == VIP_INVALID_PARAMETER);
  }
}

TEST_CASE("VipPostRecv checks the descriptor and its memory", "[via][post]") {
  RuntimeDir dir;
  Node n;
  REQUIRE(n.open("post1"));
  VIP_VI_HANDLE vi = nullptr;
  auto a = vi_attributes(n.ptag);
  REQUIRE(VipCreateVi(n.nic, &a, nullptr, nullptr, &vi) == VIP_SUCCESS);
  // Unregistered descriptor memory.
  VIP_DESCRIPTOR local{};
  CHECK(VipPostRecv(vi, &local, n.mh) == VIP_INVALID_PARAMETER);
  // Unregistered buffer handle.
  VIP_DESCRIPTOR* d = n.make(0, 64);
  d->DS[0].Local.Handle = n.mh + 77;
  CHECK(VipPostRecv(vi, d, n.mh) == VIP_DESCRIPTOR_ERROR);
  CHECK((d->CS.Status & VIP_STATUS_PROTECTION_ERROR) != 0);
  // A buffer outside its registration.
  d = n.make(0, 64);
  d->DS[0].Local.Data.Address = n.mem + Node::kBytes - 8;
  CHECK(VipPostRecv(vi, d, n.mh) == VIP_DESCRIPTOR_ERROR);
  // Receive buffers must be CLAN memory (peers cannot write plain memory).
  std::vector<char> plain(4096);
  VIP_MEM_ATTRIBUTES ma{n.ptag, VIP_FALSE, VIP_FALSE};
  VIP_MEM_HANDLE ph = 0;
  REQUIRE(VipRegisterMem(n.nic, plain.data(), plain.size(), &ma, &ph) == VIP_SUCCESS);
  d = n.make(0, 64);
  d->DS[0].Local.Data.Address = plain.data();
  d->DS[0].Local.Handle = ph;
  CHECK(VipPostRecv(vi, d, n.mh) == VIP_DESCRIPTOR_ERROR);
  CHECK((d->CS.Status & VIP_STATUS_PROTECTION_ERROR) != 0);
  // Memory under another ptag.
  VIP_PROTECTION_HANDLE other = nullptr;
  REQUIRE(VipCreatePtag(n.nic, &other) == VIP_SUCCESS);
  VIP_MEM_ATTRIBUTES mo{other, VIP_FALSE, VIP_FALSE};
  VIP_MEM_HANDLE oh = 0;
  REQUIRE(VipRegisterMem(n.nic, n.buffer(5), 64, &mo, &oh) == VIP_SUCCESS);
  d = n.make(5, 64);
  d->DS[0].Local.Handle = oh;
  CHECK(VipPostRecv(vi, d, n.mh) == VIP_DESCRIPTOR_ERROR);
  // Too many segments; RDMA operations.
  d = n.make(0, 64);
  d->CS.SegCount = 100;
  CHECK(VipPostRecv(vi, d, n.mh) == VIP_DESCRIPTOR_ERROR);
  CHECK((d->CS.Status & VIP_STATUS_FORMAT_ERROR) != 0);
  d = n.make(0, 64, VIP_CONTROL_OP_RDMAWRITE);
  CHECK(VipPostRecv(vi, d, n.mh) == VIP_ERROR_NOT_SUPPORTED);
  VIP_BOOLEAN se, re;
  VIP_VI_STATE st;
  VIP_VI_ATTRIBUTES q;
  REQUIRE(VipQueryVi(vi, &st, &q, &se, &re) == VIP_SUCCESS);
  CHECK(re == VIP_TRUE);  // nothing was queued
}
