// VIPL descriptor parsing (via/descriptor_check.cpp, via/post_message.cpp,
// via/vi_*.cpp): a real VI on a real VIPL NIC, connected to a hand-played
// hostile peer (its own cookie and transfer rings, the handshake made by
// hand). The input drives both:
//  - the application's VipPostRecv/VipPostSend with descriptors of arbitrary
//    segment counts, lengths, addresses, memory handles and control bits;
//  - the peer's receive descriptors pushed into the VI's cookie ring (any
//    magic, segment count, capacity, flags, sequence number, and segments
//    naming its own receive region, another offset or length, or a garbled
//    cookie), its transfer-queue records for the VI's receives (any
//    descriptor number, length, flags, status), and raw words anywhere in
//    both rings;
//  - VipRecvDone/VipSendDone/VipRecvWait/VipSendWait with no wait.
// Invariants: every descriptor a post accepted comes back exactly once, in
// post order per queue, with its status done; a receive completed without
// error reports no more bytes than it can hold; after VipDisconnect every
// posted descriptor has come back and the VI can be destroyed; the VI's
// sends land only inside segments the peer posted, never elsewhere in the
// peer's region.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstring>
#include <deque>
#include <thread>
#include <vector>

#include "clan_emul/aperture.hpp"
#include "clan_emul/oob_connection.hpp"
#include "clan_emul/region.hpp"
#include "fuzz/check.hpp"
#include "fuzz/fabric.hpp"
#include "tests/via/via_test_util.hpp"
#include "via/cookie_ring.hpp"
#include "via/transfer_queue.hpp"
#include "via/vipl.h"
#include "via/wire.hpp"

namespace {

using namespace std::chrono_literals;
using clan::Errc;

constexpr size_t kMaxSegments = 8;  // via/internal.hpp: more is a format error
constexpr size_t kSlots = 512;      // the peer's rings
constexpr size_t kSinkBytes = 64 * 1024;

uint16_t port_of(const std::string& disc) {  // as via/connect.cpp hashes it
  uint32_t h = 2166136261u;
  for (unsigned char c : disc) h = (h ^ c) * 16777619u;
  return static_cast<uint16_t>(h % 65535u + 1);
}

using via_test::Address;

// The VIPL side: a NIC "srv" listening on discriminator "d0", a ptag, a
// block of CLAN memory (descriptor slots, then buffers) and ordinary memory
// registered too (good for sends, refused for receives).
struct Server {
  fuzz::Fabric fabric{"evil"};  // its runtime directory is the VIPL NIC's too
  VIP_NIC_HANDLE nic = nullptr;
  VIP_PROTECTION_HANDLE ptag = nullptr;
  unsigned char* mem = nullptr;
  VIP_MEM_HANDLE mh = 0, heap_mh = 0;
  std::vector<unsigned char> heap = std::vector<unsigned char>(16 * 1024);
  static constexpr size_t kBytes = 1 << 20, kDescBytes = 512 * 1024, kDescSlot = 512;

  Server() {
    setenv("CLAN_RUNTIME_DIR", fabric.dir.path.c_str(), 1);
    FUZZ_CHECK(VipOpenNic("srv", &nic) == VIP_SUCCESS);
    FUZZ_CHECK(VipCreatePtag(nic, &ptag) == VIP_SUCCESS);
    void* p = nullptr;
    FUZZ_CHECK(VipClanAllocMem(nic, kBytes, &p) == VIP_SUCCESS);
    mem = static_cast<unsigned char*>(p);
    VIP_MEM_ATTRIBUTES ma{ptag, VIP_FALSE, VIP_FALSE};
    FUZZ_CHECK(VipRegisterMem(nic, mem, kBytes, &ma, &mh) == VIP_SUCCESS);
    FUZZ_CHECK(VipRegisterMem(nic, heap.data(), heap.size(), &ma, &heap_mh) == VIP_SUCCESS);
    Address local("srv", "d0"), remote("", "");
    VIP_VI_ATTRIBUTES ra{};
    VIP_CONN_HANDLE c = nullptr;
    // Listens from now on; requests wait for the next VipConnectWait.
    FUZZ_CHECK(VipConnectWait(nic, local.get(), 0, remote.get(), &ra, &c) == VIP_TIMEOUT);
  }
  VIP_DESCRIPTOR* slot(size_t i) { return reinterpret_cast<VIP_DESCRIPTOR*>(mem + i * kDescSlot); }
};

Server& server() {
  static Server s;
  return s;
}

// The hostile peer's end of one connection.
struct Peer {
  static constexpr via::wire::BlockLayout kLayout = via::wire::block_layout(kSlots, kSlots);
  clan::Nic& nic = *server().fabric.raw_nic;
  clan::Region block = std::move(nic.export_region(kLayout.bytes).value());  // our channel block
  // The VI's channel block: its rings, which we write (raw writes too), and
  // the read pointers of ours. It outlives the ends that write through it.
  clan::Aperture their_block;
  via::wire::BlockLayout their_layout{};
  std::unique_ptr<via::CookieReceiver> ck_rx =
      std::move(via::CookieReceiver::create(nic, block, kLayout.ck_ring, kSlots).value());
  std::unique_ptr<via::CookieSender> ck_tx = std::make_unique<via::CookieSender>(block.data() + kLayout.ck_sender);
  std::unique_ptr<via::TransferReceiver> tq_rx =
      std::move(via::TransferReceiver::create(nic, block, kLayout.tq_ring, kSlots).value());
  std::unique_ptr<via::TransferSender> tq_tx =
      std::make_unique<via::TransferSender>(block.data() + kLayout.tq_sender);
  clan::Region sink = std::move(nic.export_region(kSinkBytes).value());
  std::vector<bool> may_land = std::vector<bool>(kSinkBytes);  // bytes a posted segment covers
  via::wire::Hello theirs{};
  std::shared_ptr<clan::OobConnection> conn;
  uint64_t posted = 0;              // descriptors pushed to the VI
};

bool connect(Peer& p, VIP_VI_HANDLE vi, VIP_RELIABILITY_LEVEL level) {
  Server& s = server();
  via::wire::Hello h{};
  h.magic = via::wire::kHelloMagic;
  h.version = via::wire::kVersion;
  h.reliability = static_cast<uint16_t>(level);
  h.max_transfer = 64 * 1024;
  h.tq_slots = kSlots;
  h.ck_slots = kSlots;
  h.block = p.block.cookie();
  h.nic = clan::locate(p.nic);
  std::vector<std::byte> blob(sizeof h);
  std::memcpy(blob.data(), &h, sizeof h);
  std::thread t([&] {
    auto c = s.fabric.raw->connect("srv", port_of("d0"), blob, clan::Deadline::after(20s));
    if (c) p.conn = std::move(c.value());
  });
  Address local("srv", "d0"), remote("", "");
  VIP_VI_ATTRIBUTES ra{};
  VIP_CONN_HANDLE c = nullptr;
  VIP_RETURN r = VipConnectWait(s.nic, local.get(), 20000, remote.get(), &ra, &c);
  if (r == VIP_SUCCESS) r = VipConnectAccept(c, vi);
  t.join();
  if (r != VIP_SUCCESS || !p.conn) return false;
  FUZZ_CHECK(p.conn->peer_blob().size() >= sizeof p.theirs);
  std::memcpy(&p.theirs, p.conn->peer_blob().data(), sizeof p.theirs);
  p.their_layout = via::wire::block_layout(p.theirs.ck_slots, p.theirs.tq_slots);
  p.their_block = std::move(p.nic.import(p.theirs.block).value());
  FUZZ_CHECK(p.ck_tx->attach(p.their_block, p.their_layout.ck_ring, p.theirs.ck_slots) == Errc::kOk);
  FUZZ_CHECK(p.tq_tx->attach(p.their_block, p.their_layout.tq_ring, p.theirs.tq_slots) == Errc::kOk);
  FUZZ_CHECK(p.tq_rx->attach(p.their_block, p.their_layout.tq_sender) == Errc::kOk);
  return true;
}

// An application descriptor in slot `i`, every field from the input.
VIP_DESCRIPTOR* descriptor(FuzzedDataProvider& in, size_t i, uint64_t& capacity) {
  Server& s = server();
  VIP_DESCRIPTOR* d = s.slot(i);
  std::memset(d, 0, Server::kDescSlot);
  const uint16_t count = in.ConsumeIntegralInRange<int>(0, 15) == 0 ? in.ConsumeIntegral<uint16_t>()
                                                                    : in.ConsumeIntegralInRange<uint16_t>(0, kMaxSegments + 1);
  d->CS.SegCount = count;
  d->CS.Control = in.ConsumeIntegralInRange<int>(0, 7) == 0 ? in.ConsumeIntegral<uint16_t>()
                                                            : (in.ConsumeBool() ? VIP_CONTROL_IMMEDIATE : 0);
  d->CS.ImmediateData = in.ConsumeIntegral<uint32_t>();
  capacity = 0;
  auto* segs = reinterpret_cast<VIP_DESCRIPTOR_SEGMENT*>(reinterpret_cast<char*>(d) + offsetof(VIP_DESCRIPTOR, DS));
  const size_t room = (Server::kDescSlot - offsetof(VIP_DESCRIPTOR, DS)) / sizeof(VIP_DESCRIPTOR_SEGMENT);
  for (size_t k = 0; k < std::min<size_t>(count, room); ++k) {
    VIP_DATA_SEGMENT& seg = segs[k].Local;
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
      case 0:
      case 1:  // CLAN memory, around the buffer area
        seg.Data.Address = s.mem + Server::kDescBytes +
                           in.ConsumeIntegralInRange<size_t>(0, Server::kBytes - Server::kDescBytes + 4096);
        seg.Handle = in.ConsumeIntegralInRange<int>(0, 7) == 0 ? in.ConsumeIntegral<VIP_MEM_HANDLE>() : s.mh;
        break;
      case 2:  // ordinary memory
        seg.Data.Address = s.heap.data() + in.ConsumeIntegralInRange<size_t>(0, s.heap.size() + 64);
        seg.Handle = in.ConsumeBool() ? s.heap_mh : s.mh;
        break;
      default:  // any address at all
        seg.Data.Address = reinterpret_cast<void*>(in.ConsumeIntegral<uintptr_t>());
        seg.Handle = in.ConsumeBool() ? s.mh : in.ConsumeIntegral<VIP_MEM_HANDLE>();
        break;
    }
    seg.Length = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint32_t>(0, 9000) : in.ConsumeIntegral<uint32_t>();
    capacity += seg.Length;
  }
  return d;
}

// The peer posts a receive descriptor into the VI's cookie ring.
void peer_post(Peer& p, FuzzedDataProvider& in) {
  using namespace via::wire;
  std::vector<std::byte> msg(sizeof(PostHeader));
  PostHeader h{};
  h.magic = in.ConsumeIntegralInRange<int>(0, 15) == 0 ? in.ConsumeIntegral<uint32_t>() : kPostMagic;
  h.segments = in.ConsumeIntegralInRange<int>(0, 15) == 0 ? in.ConsumeIntegral<uint32_t>()
                                                          : in.ConsumeIntegralInRange<uint32_t>(0, kMaxSegments + 1);
  h.flags = in.ConsumeIntegralInRange<int>(0, 7) == 0 ? in.ConsumeIntegral<uint32_t>() : 0;
  h.seq = in.ConsumeIntegralInRange<int>(0, 7) == 0 ? in.ConsumeIntegral<uint64_t>() : p.posted;
  uint64_t sum = 0;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  const size_t fit = (kCkMessage - sizeof h) / sizeof(PostSegment);
  for (uint32_t k = 0; k < std::min<size_t>(h.segments, fit); ++k) {
    PostSegment s{};
    s.cookie = p.sink.cookie();
    if (in.ConsumeIntegralInRange<int>(0, 7) == 0) {  // garbled: length, generation or secret
      s.cookie.length ^= in.ConsumeIntegral<uint64_t>() & 0xffff;
      s.cookie.secret[0] ^= in.ConsumeIntegral<uint64_t>();
    }
    s.offset = in.ConsumeIntegralInRange<uint64_t>(0, kSinkBytes + 64);
    s.length = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint64_t>(0, 9000) : in.ConsumeIntegral<uint64_t>();
    sum += s.length;
    ranges.emplace_back(s.offset, s.length);
    const auto* b = reinterpret_cast<const std::byte*>(&s);
    msg.insert(msg.end(), b, b + sizeof s);
  }
  h.capacity = in.ConsumeBool() ? static_cast<uint32_t>(sum) : in.ConsumeIntegral<uint32_t>();
  std::memcpy(msg.data(), &h, sizeof h);
  if (p.ck_tx->push(p.posted, msg.data(), msg.size()) != Errc::kOk) return;
  ++p.posted;
  // Whatever the VI makes of it, it may write no further than these segments.
  for (auto [off, len] : ranges) {
    for (uint64_t b = off; b < std::min<uint64_t>(off + std::min<uint64_t>(len, kSinkBytes), kSinkBytes); ++b) {
      p.may_land[b] = true;
    }
  }
}

// The peer's record for one of the VI's receives.
void peer_record(Peer& p, FuzzedDataProvider& in, uint64_t next_recv) {
  if (p.tq_tx->space() != Errc::kOk) return;
  via::wire::Record r{};
  r.desc_seq = in.ConsumeBool() ? next_recv + in.ConsumeIntegralInRange<uint64_t>(0, 2) : in.ConsumeIntegral<uint64_t>();
  r.length = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint32_t>(0, 9000) : in.ConsumeIntegral<uint32_t>();
  r.immediate = in.ConsumeIntegral<uint32_t>();
  r.flags = in.ConsumeIntegralInRange<uint32_t>(0, 8);
  r.status = in.ConsumeBool() ? 0 : in.ConsumeIntegral<uint32_t>();
  // A VI that broke has let go of its rings: the writes fail, and that is all.
  if (p.tq_tx->put(r) == Errc::kOk) (void)p.tq_tx->publish_pio();
}

struct Queue {
  std::deque<std::pair<VIP_DESCRIPTOR*, uint64_t>> posted;  // descriptor, capacity
  uint64_t completed = 0;
};

// A completion: the oldest descriptor posted on that queue, done.
void reaped(Queue& q, VIP_RETURN r, VIP_DESCRIPTOR* d, bool recv) {
  if (r == VIP_NOT_DONE || r == VIP_TIMEOUT || r == VIP_INVALID_STATE) return;
  FUZZ_CHECK(r == VIP_SUCCESS || r == VIP_DESCRIPTOR_ERROR);
  FUZZ_CHECK(!q.posted.empty());
  FUZZ_CHECK(d == q.posted.front().first);
  FUZZ_CHECK((d->CS.Status & VIP_STATUS_DONE) != 0);
  FUZZ_CHECK((r == VIP_SUCCESS) == ((d->CS.Status & VIP_STATUS_ERROR_MASK) == 0));
  if (recv && r == VIP_SUCCESS) FUZZ_CHECK(d->CS.Length <= q.posted.front().second);
  q.posted.pop_front();
  ++q.completed;
}

void reap_all(VIP_VI_HANDLE vi, Queue& recvs, Queue& sends) {
  for (;;) {
    VIP_DESCRIPTOR* d = nullptr;
    const VIP_RETURN r = VipRecvDone(vi, &d);
    if (r == VIP_NOT_DONE) break;
    reaped(recvs, r, d, true);
  }
  for (;;) {
    VIP_DESCRIPTOR* d = nullptr;
    const VIP_RETURN r = VipSendDone(vi, &d);
    if (r == VIP_NOT_DONE) break;
    reaped(sends, r, d, false);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  Server& s = server();
  const VIP_RELIABILITY_LEVEL levels[] = {VIP_SERVICE_UNRELIABLE, VIP_SERVICE_RELIABLE_DELIVERY,
                                          VIP_SERVICE_RELIABLE_RECEPTION};
  const VIP_RELIABILITY_LEVEL level = levels[in.ConsumeIntegralInRange<int>(0, 2)];
  VIP_VI_ATTRIBUTES a{};
  a.ReliabilityLevel = level;
  a.MaxTransferSize = 64 * 1024;
  a.Ptag = s.ptag;
  VIP_VI_HANDLE vi = nullptr;
  FUZZ_CHECK(VipCreateVi(s.nic, &a, nullptr, nullptr, &vi) == VIP_SUCCESS);
  Queue recvs, sends;
  size_t next_slot = 0;
  auto post = [&](bool recv) {
    uint64_t capacity = 0;
    VIP_DESCRIPTOR* d = descriptor(in, next_slot++, capacity);
    const VIP_RETURN r = recv ? VipPostRecv(vi, d, s.mh) : VipPostSend(vi, d, s.mh);
    if (r == VIP_SUCCESS) (recv ? recvs : sends).posted.emplace_back(d, capacity);
    if (r == VIP_DESCRIPTOR_ERROR) FUZZ_CHECK((d->CS.Status & VIP_STATUS_ERROR_MASK) != 0);
  };
  // Receives posted before the connection travel in the handshake.
  for (int i = in.ConsumeIntegralInRange<int>(0, 3); i > 0; --i) post(true);

  auto p = std::make_unique<Peer>();
  FUZZ_CHECK(connect(*p, vi, level));
  while (in.remaining_bytes() > 0 && next_slot < Server::kDescBytes / Server::kDescSlot) {
    switch (in.ConsumeIntegralInRange<int>(0, 9)) {
      case 0: post(true); break;
      case 1: post(false); break;
      case 2: peer_post(*p, in); break;
      case 3: peer_record(*p, in, recvs.completed); break;
      case 4: {  // a raw word anywhere in the VI's channel block: its rings and our read pointers
        clan::Aperture& b = p->their_block;
        (void)b.write_word(in.ConsumeIntegralInRange<size_t>(0, b.size() / 8) * 8, in.ConsumeIntegral<uint64_t>());
        break;
      }
      case 5: {
        VIP_DESCRIPTOR* d = nullptr;
        reaped(recvs, VipRecvDone(vi, &d), d, true);
        break;
      }
      case 6: {
        VIP_DESCRIPTOR* d = nullptr;
        reaped(sends, VipSendDone(vi, &d), d, false);
        break;
      }
      case 7: {
        VIP_DESCRIPTOR* d = nullptr;
        reaped(recvs, VipRecvWait(vi, 0, &d), d, true);
        break;
      }
      case 8: {
        VIP_DESCRIPTOR* d = nullptr;
        reaped(sends, VipSendWait(vi, 0, &d), d, false);
        break;
      }
      case 9: {  // the peer takes the VI's records (its sends' news)
        while (true) {
          auto r = p->tq_rx->peek();
          if (!r || !*r) break;
          p->tq_rx->consume();
        }
        break;
      }
    }
  }
  FUZZ_CHECK(VipDisconnect(vi) == VIP_SUCCESS);
  reap_all(vi, recvs, sends);
  FUZZ_CHECK(recvs.posted.empty() && sends.posted.empty());
  FUZZ_CHECK(VipDestroyVi(vi) == VIP_SUCCESS);
  for (size_t b = 0; b < kSinkBytes; ++b) {
    if (!p->may_land[b]) FUZZ_CHECK(p->sink.data()[b] == std::byte{0});
  }
  return 0;
}
