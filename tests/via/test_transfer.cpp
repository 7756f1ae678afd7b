// Data transfer between two VIs in one process (two NICs): PIO and DMA,
// immediate data, reliability levels and overrun, the sect. 3.7 extensions,
// completion queues over many VIs, the mapping cache.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "tests/via/via_test_util.hpp"

using namespace via_test;

namespace {

struct Pair {
  RuntimeDir dir;
  Node server, client;
  VIP_VI_HANDLE svi = nullptr, cvi = nullptr;
  explicit Pair(VIP_RELIABILITY_LEVEL level = VIP_SERVICE_RELIABLE_DELIVERY,
                VIP_CQ_HANDLE* scq = nullptr) {
    REQUIRE(server.open("srv"));
    REQUIRE(client.open("cli"));
    auto sa = vi_attributes(server.ptag, level);
    auto ca = vi_attributes(client.ptag, level);
    REQUIRE(VipCreateVi(server.nic, &sa, nullptr, scq ? *scq : nullptr, &svi) == VIP_SUCCESS);
    REQUIRE(VipCreateVi(client.nic, &ca, nullptr, nullptr, &cvi) == VIP_SUCCESS);
  }
  void connect() { REQUIRE(connect_pair(server, svi, cvi, "srv")); }
  VIP_VI_STATE state(VIP_VI_HANDLE vi) {
    VIP_VI_STATE st;
    VIP_VI_ATTRIBUTES a;
    VIP_BOOLEAN se, re;
    REQUIRE(VipQueryVi(vi, &st, &a, &se, &re) == VIP_SUCCESS);
    return st;
  }
};

void set_mode(VIP_VI_HANDLE vi, uint32_t mode, bool defer = false, bool split = false) {
  VIP_CLAN_VI_ATTRIBUTES x{defer ? VIP_TRUE : VIP_FALSE, split ? VIP_TRUE : VIP_FALSE, mode, 1024, VIP_CLAN_WAIT_DEFAULT};
  REQUIRE(VipClanSetViAttributes(vi, &x) == VIP_SUCCESS);
}

}  // namespace

TEST_CASE("a message goes into a pre-posted receive buffer, by PIO and by DMA", "[via][data]") {
  auto mode = GENERATE(VIP_CLAN_TRANSFER_PIO, VIP_CLAN_TRANSFER_DMA, VIP_CLAN_TRANSFER_AUTO);
  Pair p;
  // Posted before the connection: carried in the handshake.
  REQUIRE(VipPostRecv(p.svi, p.server.make(0, 4096), p.server.mh) == VIP_SUCCESS);
  p.connect();
  set_mode(p.cvi, mode);
  for (int i = 0; i < 50; ++i) {
    std::string msg = "hello " + std::to_string(i) + std::string(static_cast<size_t>(i) * 60, 'x');
    if (i > 0) REQUIRE(VipPostRecv(p.svi, p.server.make(i % 2, 4096), p.server.mh) == VIP_SUCCESS);
    std::memcpy(p.client.buffer(2), msg.data(), msg.size());
    auto* d = p.client.make(2, static_cast<uint32_t>(msg.size()), VIP_CONTROL_IMMEDIATE, 1000u + i);
    REQUIRE(VipPostSend(p.cvi, d, p.client.mh) == VIP_SUCCESS);
    VIP_DESCRIPTOR* done = nullptr;
    REQUIRE(VipSendWait(p.cvi, 5000, &done) == VIP_SUCCESS);
    CHECK(done == d);
    CHECK((d->CS.Status & VIP_STATUS_DONE) != 0);
    VIP_DESCRIPTOR* r = nullptr;
    REQUIRE(VipRecvWait(p.svi, 5000, &r) == VIP_SUCCESS);
    CHECK(r == p.server.desc(i % 2));
    CHECK(r->CS.Length == msg.size());
    CHECK((r->CS.Status & VIP_STATUS_IMMEDIATE) != 0);
    CHECK(r->CS.ImmediateData == 1000u + i);
    CHECK((r->CS.Status & VIP_STATUS_OP_MASK) == VIP_STATUS_OP_RECEIVE);
    CHECK(std::memcmp(p.server.buffer(i % 2), msg.data(), msg.size()) == 0);
  }
  VIP_CLAN_NIC_STATS s;
  REQUIRE(VipClanQueryNicStats(p.client.nic, &s) == VIP_SUCCESS);
  if (mode == VIP_CLAN_TRANSFER_PIO) CHECK(s.DmaSends == 0);
  if (mode == VIP_CLAN_TRANSFER_DMA) CHECK(s.PioSends == 0);
  if (mode == VIP_CLAN_TRANSFER_AUTO) CHECK((s.PioSends > 0 && s.DmaSends > 0));
  REQUIRE(VipDisconnect(p.cvi) == VIP_SUCCESS);
  CHECK(p.state(p.cvi) == VIP_STATE_IDLE);
}

TEST_CASE("zero-byte messages and multi-segment gather/scatter", "[via][data]") {
  Pair p;
  p.connect();
  // Zero bytes, immediate data only.
  REQUIRE(VipPostRecv(p.svi, p.server.make(0, 16), p.server.mh) == VIP_SUCCESS);
  auto* z = p.client.make(0, 0, VIP_CONTROL_IMMEDIATE, 7);
  z->CS.SegCount = 0;
  REQUIRE(VipPostSend(p.cvi, z, p.client.mh) == VIP_SUCCESS);
  VIP_DESCRIPTOR* r = nullptr;
  REQUIRE(VipRecvWait(p.svi, 5000, &r) == VIP_SUCCESS);
  CHECK(r->CS.Length == 0);
  CHECK(r->CS.ImmediateData == 7);
  // Three send segments into two receive segments (descriptors of 4 segments
  // take two descriptor slots).
  auto* rd = p.server.desc(10);
  std::memset(rd, 0, 128);
  rd->CS.SegCount = 2;
  for (int i = 0; i < 2; ++i) {
    auto* seg = &reinterpret_cast<VIP_DESCRIPTOR_SEGMENT*>(rd->DS)[i].Local;
    seg->Data.Address = p.server.buffer(10 + i);
    seg->Handle = p.server.mh;
    seg->Length = 10;
  }
  REQUIRE(VipPostRecv(p.svi, rd, p.server.mh) == VIP_SUCCESS);
  auto* sd = p.client.desc(10);
  std::memset(sd, 0, 128);
  sd->CS.SegCount = 3;
  const char* parts[] = {"abcdefg", "hijklm", "nopqrst"};
  for (int i = 0; i < 3; ++i) {
    std::memcpy(p.client.buffer(10 + i), parts[i], 7);
    auto* seg = &reinterpret_cast<VIP_DESCRIPTOR_SEGMENT*>(sd->DS)[i].Local;
    seg->Data.Address = p.client.buffer(10 + i);
    seg->Handle = p.client.mh;
    seg->Length = i == 1 ? 6 : 7;
  }
  REQUIRE(VipPostSend(p.cvi, sd, p.client.mh) == VIP_SUCCESS);
  REQUIRE(VipRecvWait(p.svi, 5000, &r) == VIP_SUCCESS);
  CHECK(r->CS.Length == 20);
  CHECK(std::string(reinterpret_cast<char*>(p.server.buffer(10)), 10) == "abcdefghij");
  CHECK(std::string(reinterpret_cast<char*>(p.server.buffer(11)), 10) == "klmnopqrst");
}

TEST_CASE("overrun on an unreliable VI: the send completes, the data is dropped", "[via][overrun]") {
  Pair p(VIP_SERVICE_UNRELIABLE);
  p.connect();
  auto* d = p.client.make(0, 32);
  REQUIRE(VipPostSend(p.cvi, d, p.client.mh) == VIP_SUCCESS);
  VIP_DESCRIPTOR* out = nullptr;
  REQUIRE(VipSendWait(p.cvi, 5000, &out) == VIP_SUCCESS);
  CHECK((out->CS.Status & VIP_STATUS_ERROR_MASK) == 0);
  VIP_CLAN_NIC_STATS s;
  REQUIRE(VipClanQueryNicStats(p.client.nic, &s) == VIP_SUCCESS);
  CHECK(s.DroppedSends == 1);
  CHECK(s.PioSends + s.DmaSends == 0);  // nothing was transmitted
  // The connection survives: the next message arrives.
  REQUIRE(VipPostRecv(p.svi, p.server.make(0, 64), p.server.mh) == VIP_SUCCESS);
  REQUIRE(VipPostSend(p.cvi, p.client.make(1, 5), p.client.mh) == VIP_SUCCESS);
  REQUIRE(VipRecvWait(p.svi, 5000, &out) == VIP_SUCCESS);
  CHECK(out->CS.Length == 5);
  CHECK(p.state(p.svi) == VIP_STATE_CONNECTED);
}

TEST_CASE("overrun on a reliable VI: an error, and the connection is broken", "[via][overrun]") {
  auto level = GENERATE(VIP_SERVICE_RELIABLE_DELIVERY, VIP_SERVICE_RELIABLE_RECEPTION);
  Pair p(static_cast<VIP_RELIABILITY_LEVEL>(level));
  p.connect();
  auto* d = p.client.make(0, 32);
  REQUIRE(VipPostSend(p.cvi, d, p.client.mh) == VIP_SUCCESS);
  VIP_DESCRIPTOR* out = nullptr;
  REQUIRE(VipSendWait(p.cvi, 5000, &out) == VIP_DESCRIPTOR_ERROR);
  CHECK((out->CS.Status & VIP_STATUS_TRANSPORT_ERROR) != 0);
  CHECK(p.state(p.cvi) == VIP_STATE_ERROR);
  CHECK(VipPostSend(p.cvi, p.client.make(1, 4), p.client.mh) == VIP_INVALID_STATE);
  // The receiver learns it through the connection manager: its posted
  // descriptor is flushed with an error, within a bound.
  // (Or, if it already knows, refuses the post.)
  VIP_RETURN posted = VipPostRecv(p.svi, p.server.make(0, 64), p.server.mh);
  REQUIRE((posted == VIP_SUCCESS || posted == VIP_INVALID_STATE));
  if (posted == VIP_SUCCESS) {
    REQUIRE(VipRecvWait(p.svi, 5000, &out) == VIP_DESCRIPTOR_ERROR);
    CHECK((out->CS.Status & VIP_STATUS_DESC_FLUSHED_ERROR) != 0);
  }
  CHECK(p.state(p.svi) == VIP_STATE_ERROR);
  // Disconnect returns both to Idle.
  CHECK(VipDisconnect(p.cvi) == VIP_SUCCESS);
  CHECK(VipDisconnect(p.svi) == VIP_SUCCESS);
  CHECK(p.state(p.svi) == VIP_STATE_IDLE);
}

TEST_CASE("a receive buffer too small: length error, fatal only when reliable", "[via][length]") {
  auto level = GENERATE(VIP_SERVICE_UNRELIABLE, VIP_SERVICE_RELIABLE_DELIVERY);
  Pair p(static_cast<VIP_RELIABILITY_LEVEL>(level));
  REQUIRE(VipPostRecv(p.svi, p.server.make(0, 8), p.server.mh) == VIP_SUCCESS);
  p.connect();
  REQUIRE(VipPostSend(p.cvi, p.client.make(0, 100), p.client.mh) == VIP_SUCCESS);
  VIP_DESCRIPTOR* out = nullptr;
  REQUIRE(VipSendWait(p.cvi, 5000, &out) == VIP_DESCRIPTOR_ERROR);
  CHECK((out->CS.Status & VIP_STATUS_LENGTH_ERROR) != 0);
  REQUIRE(VipRecvWait(p.svi, 5000, &out) == VIP_DESCRIPTOR_ERROR);
  CHECK((out->CS.Status & VIP_STATUS_LENGTH_ERROR) != 0);
  if (level == VIP_SERVICE_UNRELIABLE) {
    CHECK(p.state(p.svi) == VIP_STATE_CONNECTED);
    CHECK(p.state(p.cvi) == VIP_STATE_CONNECTED);
  } else {
    CHECK(p.state(p.svi) == VIP_STATE_ERROR);
    CHECK(p.state(p.cvi) == VIP_STATE_ERROR);
  }
  // A send longer than the VI's MaxTransferSize is refused at post.
  auto* big = p.client.make(3, 8);
  big->DS[0].Local.Length = 70000;
  big->DS[0].Local.Data.Address = p.client.buffer(3);
  CHECK(VipPostSend(p.cvi, big, p.client.mh) == VIP_DESCRIPTOR_ERROR);
  CHECK((big->CS.Status & VIP_STATUS_LENGTH_ERROR) != 0);
}

TEST_CASE("deferred sends wait for a receive descriptor (sect. 3.7.1)", "[via][ext]") {
  Pair p(VIP_SERVICE_RELIABLE_DELIVERY);
  p.connect();
  set_mode(p.cvi, VIP_CLAN_TRANSFER_AUTO, /*defer=*/true);
  std::memcpy(p.client.buffer(0), "deferred", 8);
  REQUIRE(VipPostSend(p.cvi, p.client.make(0, 8), p.client.mh) == VIP_SUCCESS);
  REQUIRE(VipPostSend(p.cvi, p.client.make(1, 3), p.client.mh) == VIP_SUCCESS);
  VIP_DESCRIPTOR* out = nullptr;
  CHECK(VipSendDone(p.cvi, &out) == VIP_NOT_DONE);
  CHECK(VipSendWait(p.cvi, 20, &out) == VIP_TIMEOUT);
  CHECK(p.state(p.cvi) == VIP_STATE_CONNECTED);
  // A receive descriptor arrives: the first send goes, the second still waits.
  REQUIRE(VipPostRecv(p.svi, p.server.make(0, 64), p.server.mh) == VIP_SUCCESS);
  REQUIRE(VipSendWait(p.cvi, 5000, &out) == VIP_SUCCESS);
  CHECK(out == p.client.desc(0));
  REQUIRE(VipRecvWait(p.svi, 5000, &out) == VIP_SUCCESS);
  CHECK(std::string(reinterpret_cast<char*>(p.server.buffer(0)), out->CS.Length) == "deferred");
  CHECK(VipSendDone(p.cvi, &out) == VIP_NOT_DONE);
  REQUIRE(VipPostRecv(p.svi, p.server.make(1, 64), p.server.mh) == VIP_SUCCESS);
  REQUIRE(VipSendWait(p.cvi, 5000, &out) == VIP_SUCCESS);
  CHECK(out == p.client.desc(1));
}

TEST_CASE("a message split over several receive descriptors (sect. 3.7.2)", "[via][ext]") {
  auto mode = GENERATE(VIP_CLAN_TRANSFER_PIO, VIP_CLAN_TRANSFER_DMA);
  Pair p;
  set_mode(p.svi, VIP_CLAN_TRANSFER_AUTO, false, /*split=*/true);
  for (int i = 0; i < 3; ++i) {
    REQUIRE(VipPostRecv(p.svi, p.server.make(i, 16), p.server.mh) == VIP_SUCCESS);
  }
  p.connect();
  set_mode(p.cvi, mode);
  std::string msg = "0123456789abcdefghijklmnopqrstuvwxyzABCD";  // 40 bytes
  std::memcpy(p.client.buffer(0), msg.data(), msg.size());
  REQUIRE(VipPostSend(p.cvi, p.client.make(0, 40, VIP_CONTROL_IMMEDIATE, 99), p.client.mh) ==
          VIP_SUCCESS);
  VIP_DESCRIPTOR* out = nullptr;
  REQUIRE(VipSendWait(p.cvi, 5000, &out) == VIP_SUCCESS);
  std::string got;
  uint32_t lengths[3];
  for (int i = 0; i < 3; ++i) {
    REQUIRE(VipRecvWait(p.svi, 5000, &out) == VIP_SUCCESS);
    CHECK(out == p.server.desc(i));
    lengths[i] = out->CS.Length;
    CHECK(((out->CS.Status & VIP_STATUS_CLAN_MORE) != 0) == (i < 2));
    CHECK(((out->CS.Status & VIP_STATUS_IMMEDIATE) != 0) == (i == 2));
    got.append(reinterpret_cast<char*>(p.server.buffer(i)), out->CS.Length);
  }
  CHECK(lengths[0] == 16);
  CHECK(lengths[1] == 16);
  CHECK(lengths[2] == 8);
  CHECK(got == msg);
}

TEST_CASE("one completion queue serves many VIs", "[via][cq]") {
  RuntimeDir dir;
  Node server, client;
  REQUIRE(server.open("cqs"));
  REQUIRE(client.open("cqc"));
  VIP_CQ_HANDLE cq = nullptr, scq = nullptr;
  REQUIRE(VipCreateCQ(server.nic, 256, &cq) == VIP_SUCCESS);
  REQUIRE(VipCreateCQ(client.nic, 256, &scq) == VIP_SUCCESS);
  constexpr int kVis = 8;
  VIP_VI_HANDLE svi[kVis], cvi[kVis];
  for (int i = 0; i < kVis; ++i) {
    auto sa = vi_attributes(server.ptag);
    auto ca = vi_attributes(client.ptag);
    REQUIRE(VipCreateVi(server.nic, &sa, nullptr, cq, &svi[i]) == VIP_SUCCESS);
    REQUIRE(VipCreateVi(client.nic, &ca, scq, nullptr, &cvi[i]) == VIP_SUCCESS);
    REQUIRE(VipPostRecv(svi[i], server.make(i, 64), server.mh) == VIP_SUCCESS);
    REQUIRE(connect_pair(server, svi[i], cvi[i], "cqs", "d" + std::to_string(i)));
  }
  // Messages on VIs 5, 2, 7 (PIO and DMA): the CQ names each VI once, as a receive.
  int order[] = {5, 2, 7};
  for (int k : order) {
    set_mode(cvi[k], k == 2 ? VIP_CLAN_TRANSFER_DMA : VIP_CLAN_TRANSFER_PIO);
    client.buffer(20 + k)[0] = static_cast<unsigned char>('A' + k);
    REQUIRE(VipPostSend(cvi[k], client.make(20 + k, 1), client.mh) == VIP_SUCCESS);
  }
  std::vector<VIP_VI_HANDLE> seen;
  for (int n = 0; n < 3; ++n) {
    VIP_VI_HANDLE vi = nullptr;
    VIP_BOOLEAN recv = VIP_FALSE;
    REQUIRE(VipCQWait(cq, 5000, &vi, &recv) == VIP_SUCCESS);
    CHECK(recv == VIP_TRUE);
    VIP_DESCRIPTOR* d = nullptr;
    REQUIRE(VipRecvDone(vi, &d) == VIP_SUCCESS);
    int idx = static_cast<int>(std::find(svi, svi + kVis, vi) - svi);
    REQUIRE(idx < kVis);
    CHECK(d == server.desc(idx));
    CHECK(server.buffer(idx)[0] == 'A' + idx);
    seen.push_back(vi);
  }
  std::sort(seen.begin(), seen.end());
  CHECK(std::unique(seen.begin(), seen.end()) == seen.end());
  VIP_VI_HANDLE vi = nullptr;
  VIP_BOOLEAN recv = VIP_FALSE;
  CHECK(VipCQDone(cq, &vi, &recv) == VIP_NOT_DONE);
  // The send side: three send completions on the client's CQ.
  for (int n = 0; n < 3; ++n) {
    REQUIRE(VipCQWait(scq, 5000, &vi, &recv) == VIP_SUCCESS);
    CHECK(recv == VIP_FALSE);
    VIP_DESCRIPTOR* d = nullptr;
    REQUIRE(VipSendDone(vi, &d) == VIP_SUCCESS);
  }
  CHECK(VipCQDone(scq, &vi, &recv) == VIP_NOT_DONE);
}

TEST_CASE("the PIO mapping cache maps regions and evicts the least recently used",
          "[via][cache]") {
  Pair p(VIP_SERVICE_RELIABLE_DELIVERY);
  VIP_CLAN_NIC_ATTRIBUTES na{VIP_FALSE, 2, VIP_CLAN_WAIT_DEFAULT};
  REQUIRE(VipClanSetNicAttributes(p.client.nic, &na) == VIP_SUCCESS);
  VIP_CLAN_NIC_ATTRIBUTES rn{VIP_FALSE, 16, VIP_CLAN_WAIT_DEFAULT};
  REQUIRE(VipClanSetNicAttributes(p.server.nic, &rn) == VIP_SUCCESS);
  // Three receive regions, besides the block of the Node.
  void* region[3];
  VIP_MEM_HANDLE mh[3];
  VIP_MEM_ATTRIBUTES ma{p.server.ptag, VIP_FALSE, VIP_FALSE};
  for (int i = 0; i < 3; ++i) {
    REQUIRE(VipClanAllocMem(p.server.nic, 4096, &region[i]) == VIP_SUCCESS);
    REQUIRE(VipRegisterMem(p.server.nic, region[i], 4096, &ma, &mh[i]) == VIP_SUCCESS);
  }
  p.connect();
  auto round = [&](int r) {
    auto* d = p.server.make(r % 8, 64);
    d->DS[0].Local.Data.Address = region[r];
    d->DS[0].Local.Handle = mh[r];
    REQUIRE(VipPostRecv(p.svi, d, p.server.mh) == VIP_SUCCESS);
    REQUIRE(VipPostSend(p.cvi, p.client.make(0, 8), p.client.mh) == VIP_SUCCESS);
    VIP_DESCRIPTOR* out = nullptr;
    REQUIRE(VipRecvWait(p.svi, 5000, &out) == VIP_SUCCESS);
    REQUIRE(VipSendWait(p.cvi, 5000, &out) == VIP_SUCCESS);
  };
  VIP_CLAN_NIC_STATS s0, s1;
  REQUIRE(VipClanQueryNicStats(p.client.nic, &s0) == VIP_SUCCESS);
  round(0);
  round(1);
  round(0);  // hit
  round(1);  // hit
  REQUIRE(VipClanQueryNicStats(p.client.nic, &s1) == VIP_SUCCESS);
  CHECK(s1.MappingMisses - s0.MappingMisses == 2);
  CHECK(s1.MappingHits - s0.MappingHits == 2);
  round(2);  // evicts 0 (least recently used)
  round(1);  // still mapped
  round(0);  // mapped again
  VIP_CLAN_NIC_STATS s2;
  REQUIRE(VipClanQueryNicStats(p.client.nic, &s2) == VIP_SUCCESS);
  CHECK(s2.MappingMisses - s1.MappingMisses == 2);
  CHECK(s2.MappingHits - s1.MappingHits == 1);
  CHECK(s2.MappingEvictions - s1.MappingEvictions == 2);
}

TEST_CASE("a NIC holds as many connected VIs as VipQueryNic reports", "[via][resources]") {
  RuntimeDir dir;
  Node server, client;
  REQUIRE(server.open("mvs"));
  REQUIRE(client.open("mvc"));
  VIP_NIC_ATTRIBUTES attrs{};
  REQUIRE(VipQueryNic(server.nic, &attrs) == VIP_SUCCESS);
  REQUIRE(attrs.MaxVI >= 64);
  std::vector<VIP_VI_HANDLE> svi(attrs.MaxVI), cvi(attrs.MaxVI);
  int connected = 0;
  for (VIP_ULONG i = 0; i < attrs.MaxVI; ++i) {
    auto sa = vi_attributes(server.ptag);
    auto ca = vi_attributes(client.ptag);
    REQUIRE(VipCreateVi(server.nic, &sa, nullptr, nullptr, &svi[i]) == VIP_SUCCESS);
    REQUIRE(VipCreateVi(client.nic, &ca, nullptr, nullptr, &cvi[i]) == VIP_SUCCESS);
    if (connect_pair(server, svi[i], cvi[i], "mvs", "m" + std::to_string(i))) ++connected;
  }
  CHECK(connected == static_cast<int>(attrs.MaxVI));
}
