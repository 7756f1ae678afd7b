// Peers that misbehave: a raw CLAN peer (not via/) that speaks the handshake,
// writes through a completed descriptor's cookie and garbage into the
// transfer queue; a peer process that dies while we wait; and a forked echo.
#include <catch2/catch.hpp>

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

#include "clan_emul/nic.hpp"
#include "clan_emul/oob_manager.hpp"
#include "clan_emul/region.hpp"
#include "support/child_process.hpp"
#include "tests/via/via_test_util.hpp"
#include "via/cookie_ring.hpp"
#include "via/transfer_queue.hpp"
#include "via/wire.hpp"

using namespace via_test;
using namespace std::chrono_literals;

namespace {

uint16_t port_of(const std::string& disc) {  // as via/connect.cpp hashes it
  uint32_t h = 2166136261u;
  for (unsigned char c : disc) h = (h ^ c) * 16777619u;
  return static_cast<uint16_t>(h % 65535u + 1);
}

VIP_VI_STATE state_of(VIP_VI_HANDLE vi) {
  VIP_VI_STATE st;
  VIP_VI_ATTRIBUTES a;
  VIP_BOOLEAN se, re;
  VipQueryVi(vi, &st, &a, &se, &re);
  return st;
}

// The server side of the hostile-peer tests: a NIC "srv" and one VI on it.
struct Victim {
  RuntimeDir dir;
  Node server;
  VIP_VI_HANDLE svi = nullptr;
  VIP_VI_ATTRIBUTES sa{};
  Victim() {
    REQUIRE(server.open("srv"));
    sa = vi_attributes(server.ptag);
    REQUIRE(VipCreateVi(server.nic, &sa, nullptr, nullptr, &svi) == VIP_SUCCESS);
  }
};

// A raw CLAN peer (not via/): its own rings and a hand-made hello, connected
// to `svi` of `server`. The server's reply names its rings and the cookie of
// the receive it had posted.
struct RawPeer {
  std::unique_ptr<clan::Nic> nic = std::move(clan::Nic::open({}).value());
  std::unique_ptr<clan::OobManager> oob;
  static constexpr via::wire::BlockLayout kLayout = via::wire::block_layout(512, 512);
  clan::Region block = std::move(nic->export_region(kLayout.bytes).value());  // our channel block
  std::unique_ptr<via::CookieReceiver> ck_rx =
      std::move(via::CookieReceiver::create(*nic, block, kLayout.ck_ring, 512).value());
  std::unique_ptr<via::CookieSender> ck_tx = std::make_unique<via::CookieSender>(block.data() + kLayout.ck_sender);
  std::unique_ptr<via::TransferReceiver> tq_rx =
      std::move(via::TransferReceiver::create(*nic, block, kLayout.tq_ring, 512).value());
  std::unique_ptr<via::TransferSender> tq_tx = std::make_unique<via::TransferSender>(block.data() + kLayout.tq_sender);
  via::wire::Hello rh{};        // the server's hello
  via::wire::BlockLayout server_layout{};  // of the server's channel block
  clan::Aperture server_block;  // mapped by receive_sends or attach_records
  via::wire::PostSegment seg{};  // its posted receive's one segment
  std::shared_ptr<clan::OobConnection> link;  // the VI's connection: closing it ends the VI
  std::optional<clan::Region> sink;  // where the server's sends land (post_receive)
  uint64_t posted = 0;               // receive descriptors posted to the server

  RawPeer() {
    clan::OobConfig oc;
    oc.node = "evil";
    oob = std::move(clan::OobManager::start(oc).value());
  }
  void connect(Node& server, VIP_VI_HANDLE svi) {
    via::wire::Hello h{};
    h.magic = via::wire::kHelloMagic;
    h.version = via::wire::kVersion;
    h.reliability = VIP_SERVICE_RELIABLE_DELIVERY;
    h.max_transfer = 64 * 1024;
    h.tq_slots = 512;
    h.ck_slots = 512;
    h.block = block.cookie();
    h.nic = clan::locate(*nic);
    std::vector<std::byte> blob(sizeof h);
    std::memcpy(blob.data(), &h, sizeof h);
    AcceptOne accept(server, svi, "srv", "d0");
    REQUIRE(accept.listening());
    auto c = oob->connect("srv", port_of("d0"), blob, clan::Deadline::after(10s));
    const VIP_RETURN accepted = accept.result();
    REQUIRE(c.ok());
    REQUIRE(accepted == VIP_SUCCESS);
    link = std::move(c.value());
    const auto& reply = link->peer_blob();
    REQUIRE(reply.size() == sizeof h + sizeof(via::wire::PostHeader) + sizeof(via::wire::PostSegment));
    std::memcpy(&rh, reply.data(), sizeof rh);
    server_layout = via::wire::block_layout(rh.ck_slots, rh.tq_slots);
    server_block = std::move(nic->import(rh.block).value());
    std::memcpy(&seg, reply.data() + sizeof rh + sizeof(via::wire::PostHeader), sizeof seg);
  }
  // Sets up the peer's side of the server's sends: its cookie ring to post
  // into, the transfer queue to read, a 200 x 4 KiB region to receive in.
  void receive_sends() {
    REQUIRE(ck_tx->attach(server_block, server_layout.ck_ring, rh.ck_slots) == clan::Errc::kOk);
    REQUIRE(tq_rx->attach(server_block, server_layout.tq_sender) == clan::Errc::kOk);
    sink.emplace(std::move(nic->export_region(200 * 4096).value()));
  }
  // Posts one 4 KiB receive descriptor to the server.
  void post_receive() {
    via::wire::PostHeader ph{via::wire::kPostMagic, 1, 4096, 0, posted};
    via::wire::PostSegment ps{sink->cookie(), (posted % 200) * 4096, 4096};
    std::byte msg[sizeof ph + sizeof ps];
    std::memcpy(msg, &ph, sizeof ph);
    std::memcpy(msg + sizeof ph, &ps, sizeof ps);
    REQUIRE(ck_tx->push(posted, msg, sizeof msg) == clan::Errc::kOk);
    ++posted;
  }
};

}  // namespace

TEST_CASE("a completed descriptor's cookie is revoked, garbage in the transfer queue breaks "
          "that VI only",
          "[via][hostile]") {
  Victim v;
  Node& server = v.server;
  VIP_VI_HANDLE svi = v.svi;
  VIP_VI_ATTRIBUTES& sa = v.sa;
  // The receive buffer alone in its CLAN allocation: revocation is per allocation.
  void* buf = nullptr;
  VIP_MEM_HANDLE bh = 0;
  VIP_MEM_ATTRIBUTES ma{server.ptag, VIP_FALSE, VIP_FALSE};
  REQUIRE(VipClanAllocMem(server.nic, 4096, &buf) == VIP_SUCCESS);
  REQUIRE(VipRegisterMem(server.nic, buf, 4096, &ma, &bh) == VIP_SUCCESS);
  auto* d = server.make(0, 64);
  d->DS[0].Local.Data.Address = buf;
  d->DS[0].Local.Handle = bh;
  REQUIRE(VipPostRecv(svi, d, server.mh) == VIP_SUCCESS);

  RawPeer peer;
  peer.connect(server, svi);
  auto& nic = peer.nic;
  auto& tq_tx = peer.tq_tx;
  const via::wire::Hello& rh = peer.rh;
  const via::wire::PostSegment& seg = peer.seg;
  REQUIRE(tq_tx->attach(peer.server_block, peer.server_layout.tq_ring, rh.tq_slots) == clan::Errc::kOk);

  // While the descriptor is posted, its buffer is writable...
  auto ap = std::move(nic->import(seg.cookie).value());
  REQUIRE(ap.write(seg.offset, "evil", 4) == clan::Errc::kOk);
  via::wire::Record rec{0, 0, 4, 0, 0, 0, 0, {}};
  REQUIRE(tq_tx->put(rec) == clan::Errc::kOk);
  REQUIRE(tq_tx->publish_pio() == clan::Errc::kOk);
  VIP_DESCRIPTOR* done = nullptr;
  REQUIRE(VipRecvWait(svi, 5000, &done) == VIP_SUCCESS);
  CHECK(done->CS.Length == 4);
  CHECK(std::memcmp(buf, "evil", 4) == 0);
  // ...and once it completed, the same cookie writes nothing.
  // (Reissue gives the region a new generation: the old cookie reads as stale.)
  clan::Errc late = ap.write(seg.offset, "late", 4);
  CHECK((late == clan::Errc::kRevokedCookie || late == clan::Errc::kStaleCookie));
  CHECK(std::memcmp(buf, "evil", 4) == 0);

  // A second VI on the same NIC, to a well-behaved peer.
  Node good;
  REQUIRE(good.open("good"));
  VIP_VI_HANDLE gsvi = nullptr, gcvi = nullptr;
  auto ga = vi_attributes(good.ptag);
  REQUIRE(VipCreateVi(server.nic, &sa, nullptr, nullptr, &gsvi) == VIP_SUCCESS);
  REQUIRE(VipCreateVi(good.nic, &ga, nullptr, nullptr, &gcvi) == VIP_SUCCESS);
  REQUIRE(connect_pair(server, gsvi, gcvi, "srv", "d1"));

  SECTION("garbage in a transfer-queue record: that VI breaks, no crash") {
    REQUIRE(VipPostRecv(svi, server.make(1, 64), server.mh) == VIP_SUCCESS);
    auto ring = std::move(nic->import(rh.block).value());
    const size_t tq = peer.server_layout.tq_ring;
    // The write pointer is a doorbell only: garbage written there while the
    // VI waits wakes it, and it finds no record and waits on.
    clan::Errc rung = clan::Errc::kClosed;
    std::thread doorbell([&] { rung = ring.write_word(tq + via::wire::kTqWrite, 0xdeadbeefcafeULL); });
    CHECK(VipRecvWait(svi, 50, &done) == VIP_TIMEOUT);
    doorbell.join();
    REQUIRE(rung == clan::Errc::kOk);
    CHECK(VipRecvWait(svi, 0, &done) == VIP_TIMEOUT);
    CHECK(state_of(svi) == VIP_STATE_CONNECTED);
    // Record 1 (record 0 was the "evil" one): the right tag, a body that is
    // not one.
    const size_t slot = tq + via::wire::kTqRing + sizeof(via::wire::Record);
    unsigned char junk[sizeof(via::wire::Record) - 8];
    std::memset(junk, 0xa5, sizeof junk);
    REQUIRE(ring.write(slot + 8, junk, sizeof junk) == clan::Errc::kOk);
    REQUIRE(ring.write_word(slot, 2) == clan::Errc::kOk);
    REQUIRE(VipRecvWait(svi, 5000, &done) == VIP_DESCRIPTOR_ERROR);
    CHECK((done->CS.Status & VIP_STATUS_TRANSPORT_ERROR) != 0);
    CHECK(state_of(svi) == VIP_STATE_ERROR);
  }
  SECTION("a cookie-ring slot published with garbage") {
    // Descriptor 0 (the handshake had none of ours): the right tag, a
    // header that is not one.
    auto ring = std::move(nic->import(rh.block).value());
    const size_t ck = peer.server_layout.ck_ring;
    unsigned char junk[64];
    std::memset(junk, 0xa5, sizeof junk);
    REQUIRE(ring.write(ck + via::wire::kCkRing + 8, junk, sizeof junk) == clan::Errc::kOk);
    REQUIRE(ring.write_word(ck + via::wire::kCkRing, 1) == clan::Errc::kOk);
    REQUIRE(VipPostRecv(svi, server.make(1, 64), server.mh) == VIP_SUCCESS);
    SECTION("polling for receives does not read it: the VI breaks at its next send") {
      CHECK(VipRecvDone(svi, &done) == VIP_NOT_DONE);
      CHECK(state_of(svi) == VIP_STATE_CONNECTED);
      CHECK(VipPostSend(svi, server.make(3, 4), server.mh) == VIP_INVALID_STATE);
      CHECK(state_of(svi) == VIP_STATE_ERROR);
    }
    SECTION("a VipRecvWait that takes it ahead breaks the VI") {
      const VIP_RETURN r = VipRecvWait(svi, 5000, &done);
      INFO("VipRecvWait returned " << r);
      CHECK(r == VIP_DESCRIPTOR_ERROR);  // the posted receive, flushed
      CHECK(state_of(svi) == VIP_STATE_ERROR);
    }
  }
  SECTION("a cookie-ring slot whose segment lies outside its cookie: that VI breaks") {
    via::wire::PostHeader ph{via::wire::kPostMagic, 1, 64, 0, 0};
    via::wire::PostSegment ps{seg.cookie, seg.cookie.length, 64};  // past the end
    unsigned char msg[sizeof ph + sizeof ps];
    std::memcpy(msg, &ph, sizeof ph);
    std::memcpy(msg + sizeof ph, &ps, sizeof ps);
    auto ring = std::move(nic->import(rh.block).value());
    const size_t ck = peer.server_layout.ck_ring;
    REQUIRE(ring.write(ck + via::wire::kCkRing + 8, msg, sizeof msg) == clan::Errc::kOk);
    REQUIRE(ring.write_word(ck + via::wire::kCkRing, 1) == clan::Errc::kOk);
    CHECK(VipPostSend(svi, server.make(3, 4), server.mh) == VIP_INVALID_STATE);
    CHECK(state_of(svi) == VIP_STATE_ERROR);
  }

  // The other VI is unaffected.
  REQUIRE(VipPostRecv(gsvi, server.make(2, 64), server.mh) == VIP_SUCCESS);
  std::memcpy(good.buffer(0), "fine", 4);
  REQUIRE(VipPostSend(gcvi, good.make(0, 4), good.mh) == VIP_SUCCESS);
  REQUIRE(VipRecvWait(gsvi, 5000, &done) == VIP_SUCCESS);
  CHECK(std::memcmp(server.buffer(2), "fine", 4) == 0);
  CHECK(state_of(gsvi) == VIP_STATE_CONNECTED);
}

TEST_CASE("a send descriptor a peer can write: its checked segment is the one sent, whatever the peer "
          "writes meanwhile",
          "[via][hostile]") {
  Victim v;
  Node& server = v.server;
  VIP_VI_HANDLE svi = v.svi;
  VIP_CLAN_VI_ATTRIBUTES x{VIP_FALSE, VIP_FALSE, VIP_CLAN_TRANSFER_PIO, 1024, VIP_CLAN_WAIT_DEFAULT};
  REQUIRE(VipClanSetViAttributes(svi, &x) == VIP_SUCCESS);
  // A receive posted from the Node's block: its cookie, which the peer gets,
  // covers the whole block, descriptors included.
  REQUIRE(VipPostRecv(svi, server.make(0, 64), server.mh) == VIP_SUCCESS);
  RawPeer peer;
  peer.connect(server, svi);
  peer.receive_sends();
  auto block = std::move(peer.nic->import(peer.seg.cookie).value());
  REQUIRE(peer.seg.offset == 64 * Node::kDescriptors);  // buffer(0): the block starts at offset 0
  for (int i = 0; i < 100; ++i) peer.post_receive();
  // What the server sends: 64 bytes of its heap, registered as exactly that.
  std::vector<unsigned char> small(64, 'S');
  VIP_MEM_HANDLE hs = 0;
  VIP_MEM_ATTRIBUTES ma{server.ptag, VIP_FALSE, VIP_FALSE};
  REQUIRE(VipRegisterMem(server.nic, small.data(), 64, &ma, &hs) == VIP_SUCCESS);
  // The peer flips the send descriptor's segment length between 64 and 4096.
  const size_t length_at = 2 * 64 + offsetof(VIP_DESCRIPTOR, DS) + offsetof(VIP_DATA_SEGMENT, Length);
  std::atomic<bool> stop{false};
  std::thread flipper([&] {
    const uint32_t a = 64, b = 4096;
    while (!stop.load(std::memory_order_relaxed)) {
      block.write(length_at, &b, 4);
      block.write(length_at, &a, 4);
    }
  });
  int sent = 0, refused = 0;
  uint32_t largest = 0;
  bool ok = true;
  for (int i = 0; i < 20000 && ok; ++i) {
    VIP_DESCRIPTOR* d = server.desc(2);
    std::memset(d, 0, sizeof *d);
    d->CS.SegCount = 1;
    d->DS[0].Local.Data.Address = small.data();
    d->DS[0].Local.Handle = hs;
    d->DS[0].Local.Length = 64;
    const VIP_RETURN r = VipPostSend(svi, d, server.mh);
    if (r == VIP_DESCRIPTOR_ERROR) {  // the check saw 4096: refused, as it must be
      ++refused;
      continue;
    }
    VIP_DESCRIPTOR* done = nullptr;
    ok = r == VIP_SUCCESS && VipSendWait(svi, 5000, &done) == VIP_SUCCESS;
    auto rec = peer.tq_rx->peek();
    ok = ok && rec.ok() && rec->has_value();
    if (!ok) break;
    largest = std::max(largest, (*rec)->length);
    peer.tq_rx->consume();
    peer.post_receive();
    ++sent;
  }
  stop = true;
  flipper.join();
  INFO(sent << " sent, " << refused << " refused");
  REQUIRE(ok);
  // Nothing beyond the 64 registered bytes ever left.
  CHECK(largest == 64);
  CHECK(sent > 0);
}

TEST_CASE("a deferred send to a peer that posts receives but never drains its transfer queue sleeps, "
          "not spins",
          "[via][hostile]") {
  Victim v;
  Node& server = v.server;
  VIP_VI_HANDLE svi = v.svi;
  VIP_CLAN_VI_ATTRIBUTES x{VIP_TRUE, VIP_FALSE, VIP_CLAN_TRANSFER_PIO, 1024, VIP_CLAN_WAIT_DEFAULT};  // deferred sends
  REQUIRE(VipClanSetViAttributes(svi, &x) == VIP_SUCCESS);
  REQUIRE(VipPostRecv(svi, server.make(0, 64), server.mh) == VIP_SUCCESS);
  RawPeer peer;
  peer.connect(server, svi);
  peer.receive_sends();
  // Sends until the transfer queue, which the peer never reads, is full:
  // from then on a send waits although the peer keeps receives posted.
  std::memset(server.buffer(1), 'x', 8);
  VIP_DESCRIPTOR* done = nullptr;
  VIP_RETURN r = VIP_SUCCESS;
  int sent = 0;
  for (; sent < 2000 && r == VIP_SUCCESS; ++sent) {
    peer.post_receive();
    REQUIRE(VipPostSend(svi, server.make(1, 8), server.mh) == VIP_SUCCESS);
    r = VipSendWait(svi, 50, &done);
  }
  REQUIRE(r == VIP_TIMEOUT);
  INFO(sent << " sends before the queue was full");
  for (int i = 0; i < 4; ++i) peer.post_receive();  // more receives: still no room
  timespec cpu0{}, cpu1{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
  const auto wall0 = std::chrono::steady_clock::now();
  CHECK(VipSendWait(svi, 300, &done) == VIP_TIMEOUT);
  const auto wall = std::chrono::steady_clock::now() - wall0;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
  const double cpu_s = double(cpu1.tv_sec - cpu0.tv_sec) + double(cpu1.tv_nsec - cpu0.tv_nsec) / 1e9;
  const double wall_s = std::chrono::duration<double>(wall).count();
  INFO("the wait used " << cpu_s << " s of CPU in " << wall_s << " s");
  // Asleep nearly all the time: about 4 % of it here, against all of a free
  // CPU spinning (half of one shared with a build).
  CHECK(cpu_s < wall_s / 5);
}

TEST_CASE("VIs in two processes: echo, then the peer dies while we wait", "[via][multiprocess]") {
  RuntimeDir dir;
  clan::test::Pipe ready, accepted;
  clan::test::ChildProcess child([&]() -> int {
    Node n;  // NICs only after fork
    if (!n.open("echo")) return 10;
    VIP_VI_HANDLE vi = nullptr;
    auto a = vi_attributes(n.ptag);
    if (VipCreateVi(n.nic, &a, nullptr, nullptr, &vi) != VIP_SUCCESS) return 11;
    for (int i = 0; i < 4; ++i) VipPostRecv(vi, n.make(i, 4096), n.mh);
    Address local("echo", "e");
    Address out("", "");
    VIP_VI_ATTRIBUTES ra{};
    VIP_CONN_HANDLE c = nullptr;
    VipConnectWait(n.nic, local.get(), 0, out.get(), &ra, &c);  // starts listening
    ready.put('r');
    if (VipConnectWait(n.nic, local.get(), 20000, out.get(), &ra, &c) != VIP_SUCCESS) return 12;
    if (VipConnectAccept(c, vi) != VIP_SUCCESS) return 13;
    for (int i = 0; i < 100; ++i) {
      VIP_DESCRIPTOR* r = nullptr;
      if (VipRecvWait(vi, 20000, &r) != VIP_SUCCESS) return 14;
      size_t slot = static_cast<size_t>(r - n.desc(0));
      uint32_t len = r->CS.Length;
      std::memcpy(n.buffer(10), n.buffer(slot), len);
      VipPostRecv(vi, n.make(slot, 4096), n.mh);
      VIP_DESCRIPTOR* s = nullptr;
      if (VipPostSend(vi, n.make(10, len), n.mh) != VIP_SUCCESS) return 15;
      if (VipSendWait(vi, 20000, &s) != VIP_SUCCESS) return 16;
    }
    accepted.put('a');
    pause();  // killed by the parent
    return 0;
  });
  char token;
  REQUIRE(ready.get(token));
  Node n;
  REQUIRE(n.open("parent"));
  VIP_VI_HANDLE vi = nullptr;
  auto a = vi_attributes(n.ptag);
  REQUIRE(VipCreateVi(n.nic, &a, nullptr, nullptr, &vi) == VIP_SUCCESS);
  REQUIRE(VipPostRecv(vi, n.make(0, 4096), n.mh) == VIP_SUCCESS);
  Address local("", "p");
  Address remote("echo", "e");
  VIP_VI_ATTRIBUTES ra{};
  REQUIRE(VipConnectRequest(vi, local.get(), remote.get(), 20000, &ra) == VIP_SUCCESS);
  CHECK(ra.ReliabilityLevel == VIP_SERVICE_RELIABLE_DELIVERY);
  for (int i = 0; i < 100; ++i) {
    std::string msg = "ping " + std::to_string(i) + std::string(static_cast<size_t>(i) * 30, 'y');
    std::memcpy(n.buffer(1), msg.data(), msg.size());
    REQUIRE(VipPostSend(vi, n.make(1, static_cast<uint32_t>(msg.size())), n.mh) == VIP_SUCCESS);
    VIP_DESCRIPTOR* r = nullptr;
    REQUIRE(VipRecvWait(vi, 20000, &r) == VIP_SUCCESS);
    REQUIRE(r->CS.Length == msg.size());
    CHECK(std::memcmp(n.buffer(0), msg.data(), msg.size()) == 0);
    REQUIRE(VipSendWait(vi, 20000, &r) == VIP_SUCCESS);
    REQUIRE(VipPostRecv(vi, n.make(0, 4096), n.mh) == VIP_SUCCESS);
  }
  REQUIRE(accepted.get(token));
  // Blocked in VipRecvWait when the peer is killed: an error within a bound.
  std::thread killer([&] { child.kill_now(); });
  auto start = std::chrono::steady_clock::now();
  VIP_DESCRIPTOR* r = nullptr;
  VIP_RETURN ret = VipRecvWait(vi, 20000, &r);
  auto took = std::chrono::steady_clock::now() - start;
  killer.join();
  CHECK(ret == VIP_DESCRIPTOR_ERROR);
  CHECK(took < 5s);
  CHECK(state_of(vi) == VIP_STATE_ERROR);
  CHECK(VipPostSend(vi, n.make(1, 4), n.mh) == VIP_INVALID_STATE);
  WARN("peer death seen after "
       << std::chrono::duration_cast<std::chrono::microseconds>(took).count() << " us");
  child.wait();
}
