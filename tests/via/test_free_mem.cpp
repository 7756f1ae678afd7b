// VipClanFreeMem of a block the library still uses: a descriptor posted
// from it (or completed but not yet handed back), a queued send's buffer in
// it, and a block deregistered and freed while another thread posts from
// it. The library refuses the free (VIP_INVALID_STATE) or the post (a
// protection error); it never touches a freed block (ASan sees it if it did).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "tests/via/via_test_util.hpp"

using namespace via_test;

namespace {

struct Peers : ViPair {
  Peers() { REQUIRE(open("srv", "cli")); }
  // The client sends `n` bytes from its own memory and reaps the send.
  void send(size_t n) {
    REQUIRE(VipPostSend(cvi, client.make(1, static_cast<uint32_t>(n)), client.mh) == VIP_SUCCESS);
    VIP_DESCRIPTOR* d = nullptr;
    REQUIRE(VipSendWait(cvi, 5000, &d) == VIP_SUCCESS);
  }
};

// A block of its own from VipClanAllocMem, registered.
struct Block {
  unsigned char* mem = nullptr;
  VIP_MEM_HANDLE mh = 0;
  Block(Node& n, size_t bytes = 64 * 1024) {
    void* p = nullptr;
    REQUIRE(VipClanAllocMem(n.nic, bytes, &p) == VIP_SUCCESS);
    mem = static_cast<unsigned char*>(p);
    VIP_MEM_ATTRIBUTES ma{n.ptag, VIP_FALSE, VIP_FALSE};
    REQUIRE(VipRegisterMem(n.nic, mem, bytes, &ma, &mh) == VIP_SUCCESS);
  }
};

VIP_DESCRIPTOR* one_segment(void* where, void* buf, VIP_MEM_HANDLE mh, uint32_t len) {
  auto* d = static_cast<VIP_DESCRIPTOR*>(where);
  std::memset(d, 0, sizeof *d);
  d->CS.SegCount = 1;
  d->DS[0].Local.Data.Address = buf;
  d->DS[0].Local.Handle = mh;
  d->DS[0].Local.Length = len;
  return d;
}

}  // namespace

TEST_CASE("VipClanFreeMem: a block holding a posted receive descriptor is refused until the descriptor is handed back",
          "[via][free_mem]") {
  Peers p;
  Block blk(p.server);
  VIP_DESCRIPTOR* d = one_segment(blk.mem, p.server.buffer(0), p.server.mh, 4096);
  REQUIRE(VipPostRecv(p.svi, d, blk.mh) == VIP_SUCCESS);
  REQUIRE(p.connect());
  REQUIRE(VipDeregisterMem(p.server.nic, blk.mem, blk.mh) == VIP_SUCCESS);
  CHECK(VipClanFreeMem(p.server.nic, blk.mem) == VIP_INVALID_STATE);
  p.send(100);
  // Completed, not yet handed back: the library still reads its status.
  VIP_BOOLEAN ready = VIP_FALSE;
  for (int i = 0; i < 5000 && !ready; ++i) {
    REQUIRE(VipClanRecvReady(p.svi, &ready) == VIP_SUCCESS);
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE(ready);
  CHECK(VipClanFreeMem(p.server.nic, blk.mem) == VIP_INVALID_STATE);
  VIP_DESCRIPTOR* got = nullptr;
  REQUIRE(VipRecvDone(p.svi, &got) == VIP_SUCCESS);
  CHECK(got == d);
  CHECK(d->CS.Length == 100);
  CHECK(VipClanFreeMem(p.server.nic, blk.mem) == VIP_SUCCESS);
}

TEST_CASE("VipClanFreeMem: a block holding a queued send's buffer is refused until the send completes",
          "[via][free_mem]") {
  Peers p;
  Block blk(p.client);
  REQUIRE(p.connect());
  // DeferSends: the send waits in the VI until the server posts a receive.
  VIP_CLAN_VI_ATTRIBUTES x{VIP_TRUE, VIP_FALSE, VIP_CLAN_TRANSFER_PIO, 1024, VIP_CLAN_WAIT_DEFAULT};
  REQUIRE(VipClanSetViAttributes(p.cvi, &x) == VIP_SUCCESS);
  std::memset(blk.mem, 'q', 4096);
  VIP_DESCRIPTOR* d = one_segment(p.client.desc(0), blk.mem, blk.mh, 4096);
  REQUIRE(VipPostSend(p.cvi, d, p.client.mh) == VIP_SUCCESS);
  REQUIRE(VipDeregisterMem(p.client.nic, blk.mem, blk.mh) == VIP_SUCCESS);
  CHECK(VipClanFreeMem(p.client.nic, blk.mem) == VIP_INVALID_STATE);
  REQUIRE(VipPostRecv(p.svi, p.server.make(0, 4096), p.server.mh) == VIP_SUCCESS);
  VIP_DESCRIPTOR* got = nullptr;
  REQUIRE(VipSendWait(p.cvi, 5000, &got) == VIP_SUCCESS);
  CHECK(got == d);
  REQUIRE(VipRecvWait(p.svi, 5000, &got) == VIP_SUCCESS);
  CHECK(got->CS.Length == 4096);
  CHECK(p.server.buffer(0)[4095] == 'q');
  CHECK(VipClanFreeMem(p.client.nic, blk.mem) == VIP_SUCCESS);
}

TEST_CASE("VipClanFreeMem: a block deregistered and freed while another thread posts receives from it is never touched",
          "[via][free_mem]") {
  // One thread posts 8-segment receives: segment 0 in block R, the others
  // through seven more handles (each a lookup under the NIC's lock, which
  // widens the window between finding R and holding it); a 0-byte send
  // completes each. Another thread deregisters R, frees it (retrying while
  // a receive holds it) and allocates the next R. Each post either holds a
  // live R or fails with a protection error; under AddressSanitizer a post
  // that touched a freed R fails the test.
  Peers p;
  REQUIRE(p.connect());
  VIP_MEM_HANDLE extra[7];
  for (auto& h : extra) {
    VIP_MEM_ATTRIBUTES ma{p.server.ptag, VIP_FALSE, VIP_FALSE};
    REQUIRE(VipRegisterMem(p.server.nic, p.server.mem, Node::kBytes, &ma, &h) == VIP_SUCCESS);
  }
  std::mutex mu;  // the test's own: which R is current
  unsigned char* cur = nullptr;
  VIP_MEM_HANDLE cur_h = 0;
  auto make_block = [&]() -> bool {
    void* q = nullptr;
    if (VipClanAllocMem(p.server.nic, 4096, &q) != VIP_SUCCESS) return false;
    VIP_MEM_ATTRIBUTES ma{p.server.ptag, VIP_FALSE, VIP_FALSE};
    VIP_MEM_HANDLE h = 0;
    if (VipRegisterMem(p.server.nic, q, 4096, &ma, &h) != VIP_SUCCESS) return false;
    std::lock_guard l(mu);
    cur = static_cast<unsigned char*>(q);
    cur_h = h;
    return true;
  };
  REQUIRE(make_block());
  std::atomic<bool> stop{false};
  std::atomic<long> cycles{0}, refused{0}, failures{0};
  std::thread freer([&] {
    while (!stop) {
      unsigned char* m;
      VIP_MEM_HANDLE h;
      {
        std::lock_guard l(mu);
        m = cur;
        h = cur_h;
      }
      for (long i = 0; i < (cycles % 64) * 20; ++i) std::atomic_signal_fence(std::memory_order_seq_cst);
      if (VipDeregisterMem(p.server.nic, m, h) != VIP_SUCCESS) ++failures;
      VIP_RETURN r;
      while ((r = VipClanFreeMem(p.server.nic, m)) == VIP_INVALID_STATE) {
        ++refused;
        std::this_thread::yield();
      }
      if (r != VIP_SUCCESS || !make_block()) {
        ++failures;
        return;
      }
      ++cycles;
    }
  });
  auto* d = reinterpret_cast<VIP_DESCRIPTOR*>(p.server.mem + 64 * 1024);
  long posted = 0, rejected = 0;
  bool ok = true;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (ok && std::chrono::steady_clock::now() < end) {
    unsigned char* m;
    VIP_MEM_HANDLE h;
    {
      std::lock_guard l(mu);
      m = cur;
      h = cur_h;
    }
    std::memset(d, 0, sizeof(VIP_CONTROL_SEGMENT) + 8 * sizeof(VIP_DESCRIPTOR_SEGMENT));
    d->CS.SegCount = 8;
    auto* seg = reinterpret_cast<VIP_DESCRIPTOR_SEGMENT*>(&d->DS[0]);
    seg[0].Local.Data.Address = m;
    seg[0].Local.Handle = h;
    seg[0].Local.Length = 64;
    for (int i = 1; i < 8; ++i) {
      seg[i].Local.Data.Address = p.server.buffer(static_cast<size_t>(i));
      seg[i].Local.Handle = extra[i - 1];
      seg[i].Local.Length = 64;
    }
    const VIP_RETURN r = VipPostRecv(p.svi, d, p.server.mh);
    if (r == VIP_DESCRIPTOR_ERROR && (d->CS.Status & VIP_STATUS_PROTECTION_ERROR)) {
      ++rejected;
      continue;
    }
    ok = r == VIP_SUCCESS;
    if (!ok) break;
    ++posted;
    VIP_DESCRIPTOR* sd = p.client.make(5, 0);  // 0 bytes: nothing lands in R
    VIP_DESCRIPTOR* got = nullptr;
    ok = VipPostSend(p.cvi, sd, p.client.mh) == VIP_SUCCESS && VipSendWait(p.cvi, 5000, &got) == VIP_SUCCESS &&
         VipRecvWait(p.svi, 5000, &got) == VIP_SUCCESS && got == d;
  }
  stop = true;
  freer.join();
  INFO("posted " << posted << ", rejected " << rejected << ", blocks freed " << cycles << ", frees refused "
                 << refused);
  CHECK(ok);
  CHECK(failures == 0);
  CHECK(posted > 0);
  CHECK(cycles > 0);
}
