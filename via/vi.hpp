// The VI behind a VIP_VI_HANDLE, its queues' entries, and its data path:
// vi_send.cpp, vi_receive.cpp, vi_completion.cpp, vi_wait.cpp,
// vi_teardown.cpp, descriptor_check.cpp.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "clan_emul/counter.hpp"
#include "clan_emul/deadline.hpp"
#include "via/conn.hpp"
#include "via/containers.hpp"
#include "via/limits.hpp"
#include "via/memory.hpp"
#include "via/vipl.h"
#include "via/wire.hpp"

namespace via {

struct NicImpl;

// Statistics only their owner writes: no read-modify-write needed.
using clan::bump;

// A completed descriptor waiting for the application (VipRecvDone, ...),
// with the CLAN block it lies in, held until then (null: other memory).
struct Done {
  VIP_DESCRIPTOR* d = nullptr;
  MemRegion* block = nullptr;
};

struct PostedRecv {
  VIP_DESCRIPTOR* d = nullptr;
  MemRegion* block = nullptr;  // the descriptor's own CLAN block, held (see MemRegion::in_use)
  uint64_t seq = 0;
  uint32_t capacity = 0;
  bool split = false;
  InlineVec<wire::PostSegment, kMaxSegments> segs;
  InlineVec<MemRegion*, kMaxSegments> regions;  // held: one per segment
};

struct LocalSegment {
  const std::byte* data;
  uint32_t length;
};

struct QueuedSend {
  VIP_DESCRIPTOR* d = nullptr;
  MemRegion* block = nullptr;  // the descriptor's own CLAN block, held (see MemRegion::in_use)
  InlineVec<MemRegion*, kMaxSegments> data_blocks;  // CLAN blocks of its buffers, held until it completes
  uint32_t total = 0;
  InlineVec<LocalSegment, kMaxSegments> segs;
  bool in_flight = false;
  uint64_t ticket = 0;
  // Nonzero: its records' tags are owed (the peer's endpoint was on the
  // host). It completes once the transfer queue is published this far; a
  // send is never reported delivered while its message may not arrive.
  uint64_t owed_to = 0;
  uint32_t status = 0;  // completion status once in flight
  std::vector<std::shared_ptr<clan::Aperture>> pins;  // a DMA in flight reads through these
};

struct RemoteDesc {
  uint64_t seq = 0;
  uint32_t capacity = 0;
  bool split = false;
  InlineVec<wire::PostSegment, kMaxSegments> segs;
};

struct Vi {
  NicImpl* nic;
  uint64_t id;
  Cq* send_cq;
  Cq* recv_cq;
  uint32_t send_src = 0, recv_src = 0;  // sources on the CQs' event queues

  std::mutex mu;
  VIP_VI_ATTRIBUTES attrs;
  VIP_CLAN_VI_ATTRIBUTES ext{VIP_FALSE, VIP_FALSE, VIP_CLAN_TRANSFER_AUTO, 1024, VIP_CLAN_WAIT_DEFAULT};
  // Under mu: how this VI's waits go (its WaitMode, else its NIC's).
  clan::WaitMode wait_mode() const;
  VIP_VI_STATE state = VIP_STATE_IDLE;
  std::shared_ptr<Conn> conn;
  uint64_t next_post = 0;        // our receive descriptors
  uint64_t pushed = 0;           // our receive descriptors the peer has been told of
  uint64_t next_remote = 0;      // the peer's, as they arrive
  uint64_t last_dma_ticket = 0;  // pointer updates in flight by DMA
  Fifo<PostedRecv> posted;
  Fifo<QueuedSend> sends;
  Fifo<RemoteDesc> remote;
  Fifo<Done> send_done, recv_done;
  bool recv_notify = true;  // VipClanCQNotify: receives report to recv_cq
  // Readiness mode (VipClanCQNotify was called): at most one receive entry
  // of this VI waits in recv_cq, so a busy VI cannot bury others' entries.
  bool cq_readiness = false;       // under mu
  bool recv_entry_queued = false;  // under recv_cq->mu
  // Receive completions so far: VipRecvWait also waits for one found by
  // another thread (e.g. one polling a completion queue). Written under mu.
  std::atomic<uint64_t> recv_completions{0};
  uint32_t recv_waiters = 0;  // threads in VipRecvWait between checks (under mu)
  uint32_t cookie_waiters = 0;  // threads in VipSendWait for a receive descriptor (under mu)
  // Send completions so far: a VipSendWait asleep on the cookie ring also
  // wakes for one that another thread's progress made (it took the
  // descriptor the sleeper was woken for). Written under mu.
  std::atomic<uint64_t> send_completions{0};

  // Caches, under mu: the last registrations looked up (valid while the
  // NIC's mem_epoch is unchanged) and the last peer region mapped.
  struct MemHit {
    VIP_MEM_HANDLE handle = 0;
    uint64_t epoch = 0;
    MemReg reg{};
  };
  MemHit mem_hits[2];
  uint32_t mem_next = 0;  // the entry a miss replaces
  std::shared_ptr<clan::Aperture> last_map;

  // Writes into the peer's channel block that found its endpoint on the host
  // (paper 004 sect. 3.2: negatively acknowledged, retried, never dropped):
  // a held send or receive descriptor, an owed tag, doorbell or read
  // pointer. They are retried at every progress; `peer_hold` is how long
  // each such write waits for residency under the VI's lock: not at all (a
  // waiter that would otherwise sleep waits for the peer's endpoint without
  // the lock, vi_wait.cpp, then retries). Under mu.
  bool held = false;
  // Whether the VI's completion queues were told it is held: a VI becomes
  // held mostly on an application thread (a post, a done), which causes no
  // event, and a thread waiting only in VipCQWait retries the held VIs its
  // queue has been told of (cq.cpp). Under mu.
  bool held_told = false;
  clan::Deadline peer_hold = clan::Deadline::already_expired();
  // How long a waiter that finds writes held waits for the peer's endpoint
  // at a time, without the VI's lock, before it looks at the VI again.
  static constexpr std::chrono::milliseconds kHeldSlice{2};

  // Statistics (VipClanQueryNicStats): written under mu, read by anyone.
  std::atomic<uint64_t> pio_sends{0}, dma_sends{0}, dropped_sends{0}, mapping_hits{0};

  // All under mu.
  void progress();  // below: advance(), then note_held()
  void advance();
  // Tells the VI's completion queues when it becomes held (see held_told):
  // after anything that may hold a write. A compare on the resident path.
  void note_held() {
    if (held != held_told) tell_held();
  }
  // descriptor_check.cpp: the registration with handle h, or null.
  const MemReg* find_mem(VIP_MEM_HANDLE h);
  // vi_send.cpp. map: the peer region of cookie c, mapped (PIO mapping
  // cache): last_map, or null with the error in `e`.
  const std::shared_ptr<clan::Aperture>* map(const clan::RdmaCookie& c, clan::Errc& e);
  bool pull_cookie();
  void process_sends();
  // An owed publication of the transfer queue, by PIO or behind DMA.
  clan::Errc republish();
  // vi_held.cpp: retries the held writes (under peer_hold); `held` says
  // whether any are left.
  void flush_held();
  void tell_held();
  // vi_receive.cpp. push_posts: the receive descriptors not yet pushed, in
  // order; kTimeout (and `held`) if the peer's endpoint is on the host.
  clan::Errc push_posts();
  clan::Errc push_post(const PostedRecv& p);
  void poll_records();
  // vi_completion.cpp.
  void complete_sends();
  void finish_send(QueuedSend& s, uint32_t status);
  void finish_recv(PostedRecv& p, uint32_t status);
  // vi_teardown.cpp.
  void fail(uint32_t status);  // breaks the connection: state Error, descriptors flushed
  // Drops the channel; leaves descriptors alone. Orderly: our writes land
  // at the peer before it hears of the disconnect.
  void teardown(bool orderly = true);
};

// Progress is made inside the calls (post, done, wait, CQ): there is no
// library thread. Inline: every data-transfer call makes it.
inline void Vi::progress() {
  advance();
  note_held();
}

inline void Vi::advance() {
  if (!conn || state != VIP_STATE_CONNECTED) return;
  const int down = conn->down.load(std::memory_order_acquire);
  if (held) flush_held();
  if (!conn) return;
  if (conn->tq_rx->readable()) poll_records();  // what the peer sent before it went is ours
  if (!conn) return;
  if (down != 0) return fail(down == 2 ? VIP_STATUS_TRANSPORT_ERROR : 0);
  if (sends.empty()) return;
  complete_sends();
  // Sends not yet in flight are the tail of the queue.
  if (conn && !sends.empty() && !sends.back().in_flight) process_sends();
}

// A send whose message is on its way: its records published (or queued
// behind its data by DMA). What a breaking VI reports it with.
inline bool sent(const QueuedSend& s) { return s.in_flight && s.owed_to == 0; }

inline bool reliable(const Vi& vi) { return vi.attrs.ReliabilityLevel != VIP_SERVICE_UNRELIABLE; }

// Hands the next completed descriptor of `q` back to the application:
// VIP_SUCCESS, or VIP_DESCRIPTOR_ERROR if its status has an error bit.
inline VIP_RETURN take_done(Fifo<Done>& q, VIP_DESCRIPTOR** out) {
  const Done done = q.front();
  q.pop_front();
  *out = done.d;
  const VIP_RETURN r =
      (done.d->CS.Status & VIP_STATUS_ERROR_MASK) ? VIP_DESCRIPTOR_ERROR : VIP_SUCCESS;
  unhold(done.block);  // the application's again: read nothing in it after this
  return r;
}

// Lets go of what a send holds in CLAN blocks (see MemRegion::in_use).
inline void release_blocks(QueuedSend& s) {
  unhold(s.block);
  s.block = nullptr;
  for (MemRegion* r : s.data_blocks) unhold(r);
  s.data_blocks.clear();
}

// Checks a descriptor and its memory (descriptor_check.cpp). VIP_SUCCESS,
// VIP_INVALID_PARAMETER (the descriptor itself is not in registered memory),
// or an error status to complete it with. For receives (`post`), also the
// cookies of its buffers, whose regions it holds; for sends (`send`), its
// buffers and the CLAN blocks they lie in, held. Under vi->mu.
VIP_RETURN check_descriptor(Vi* vi, VIP_DESCRIPTOR* d, VIP_MEM_HANDLE mh, bool recv,
                            uint32_t& error, uint32_t& total, PostedRecv* post,
                            QueuedSend* send);

// VipSendWait and VipRecvWait once their handles are checked (vi_wait.cpp).
VIP_RETURN wait_send(Vi* vi, VIP_ULONG timeout, VIP_DESCRIPTOR** out);
VIP_RETURN wait_recv(Vi* vi, VIP_ULONG timeout, VIP_DESCRIPTOR** out);

}  // namespace via
