// The objects behind the VIPL handles. Internal to via/.
//
// Locks: a VI's mutex may be held while taking its NIC's or a CQ's mutex,
// never the other way round. Nothing blocks while holding a lock, except the
// bounded wait for a VI's own DMA when it disconnects.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "clan_emul/counter.hpp"
#include "clan_emul/dma_stream.hpp"
#include "clan_emul/event_queue.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/oob_listener.hpp"
#include "clan_emul/oob_manager.hpp"
#include "clan_emul/region.hpp"
#include "via/cookie_ring.hpp"
#include "via/mapping_cache.hpp"
#include "via/transfer_queue.hpp"
#include "via/vipl.h"
#include "via/wire.hpp"

namespace via {

struct NicImpl;
struct Vi;
struct Cq;

// Limits reported by VipQueryNic.
constexpr uint32_t kMaxDescriptorsPerQueue = 256;
constexpr uint32_t kMaxSegments = 8;
constexpr uint32_t kMaxTransfer = 16u << 20;
constexpr uint32_t kMaxCqEntries = 1u << 16;
constexpr uint32_t kTransferSlots = 512;  // > queue depth: a sender never finds it full
// ... even with the read pointer an eighth of the ring behind (TransferReceiver::consume).
static_assert(kTransferSlots - kTransferSlots / 8 > kMaxDescriptorsPerQueue);
// Cookie ring slots: the same bound as the transfer queue's.
constexpr uint32_t kCookieSlots = 512;
static_assert(kCookieSlots - kCookieSlots / 8 > kMaxDescriptorsPerQueue);
constexpr size_t kCookieMessage = wire::kCkMessage;
static_assert(sizeof(wire::PostHeader) + kMaxSegments * sizeof(wire::PostSegment) <=
              kCookieMessage);

// Up to N elements in place: no allocation. Copies copy the elements in use.
template <class T, size_t N>
class InlineVec {
 public:
  InlineVec() {}  // NOLINT: the elements past size() stay uninitialised
  InlineVec(const InlineVec& o) : n_(o.n_) { std::copy(o.items_, o.items_ + n_, items_); }
  InlineVec& operator=(const InlineVec& o) {
    n_ = o.n_;
    std::copy(o.items_, o.items_ + n_, items_);
    return *this;
  }
  size_t size() const { return n_; }
  bool full() const { return n_ == N; }
  void push_back(const T& v) { items_[n_++] = v; }  // the caller checks full()
  void clear() { n_ = 0; }
  T& operator[](size_t i) { return items_[i]; }
  const T& operator[](size_t i) const { return items_[i]; }
  T* begin() { return items_; }
  T* end() { return items_ + n_; }
  const T* begin() const { return items_; }
  const T* end() const { return items_ + n_; }

 private:
  static_assert(std::is_trivially_copyable_v<T>);
  uint32_t n_ = 0;
  T items_[N];
};

// A FIFO on a ring that doubles when full: once it has grown to the depth in
// use, pushes and pops allocate nothing.
template <class T>
class Fifo {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  T& operator[](size_t i) { return buf_[(head_ + i) & (buf_.size() - 1)]; }
  T& front() { return buf_[head_]; }
  T& back() { return (*this)[size_ - 1]; }
  void push_back(T v) {
    if (size_ == buf_.size()) grow();
    (*this)[size_++] = std::move(v);
  }
  void pop_front() {
    if constexpr (!std::is_trivially_destructible_v<T>) buf_[head_] = T();
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
  }
  void pop_front(size_t n) {
    while (n-- > 0) pop_front();
  }
  void clear() { pop_front(size_); }

 private:
  void grow() {
    std::vector<T> b(buf_.empty() ? 8 : 2 * buf_.size());  // a power of two
    for (size_t i = 0; i < size_; ++i) b[i] = std::move((*this)[i]);
    buf_.swap(b);
    head_ = 0;
  }
  std::vector<T> buf_;
  size_t head_ = 0, size_ = 0;
};

// Handle validation: every handle given out is registered with its kind; a
// call with a stale or foreign handle gets VIP_INVALID_PARAMETER.
enum class Kind { kNic, kVi, kCq, kPtag, kConn };
void register_handle(const void* h, Kind k);
void unregister_handle(const void* h);
bool is_handle(const void* h, Kind k);

struct Ptag {
  NicImpl* nic;
};

// Memory from VipClanAllocMem: an exported CLAN region.
struct MemRegion {
  clan::Region region;
  std::mutex mu;             // outstanding, and the cookie while it is reissued
  uint32_t outstanding = 0;  // posted receive descriptors using it
  // Descriptors in this block not yet handed back to the application, and
  // queued sends reading from it: VipClanFreeMem refuses the block until
  // none is left. Raised only under the NIC's lock, after checking that the
  // registrations used are still there (a block freed meanwhile is never
  // touched); lowered anywhere.
  std::atomic<uint32_t> in_use{0};
};

// Lets go of one hold on a block (see MemRegion::in_use); null: none taken.
inline void unhold(MemRegion* r) {
  if (r) r->in_use.fetch_sub(1, std::memory_order_release);
}

struct MemReg {
  uintptr_t addr;
  size_t len;
  Ptag* ptag;
  MemRegion* region;  // null: not writable by peers (sends and descriptors only)
  VIP_MEM_ATTRIBUTES attrs;
};

struct NicImpl {
  std::unique_ptr<clan::Nic> nic;
  std::unique_ptr<clan::OobManager> oob;
  std::string name;
  MappingCache cache{16};

  std::mutex mu;  // the tables below
  std::map<uintptr_t, std::unique_ptr<MemRegion>> regions;  // by base address
  std::map<VIP_MEM_HANDLE, MemReg> mems;
  // Bumped (under mu) whenever a registration goes: VIs' cached copies of
  // registrations from an older epoch are not used.
  std::atomic<uint64_t> mem_epoch{1};
  VIP_MEM_HANDLE next_mem = 1;
  std::set<Ptag*> ptags;
  std::map<uint64_t, Vi*> vis;  // by id
  std::set<Cq*> cqs;
  // Shared: a thread in VipConnectWait keeps its listener alive while
  // VipClanStopListening or VipCloseNic closes it.
  std::map<uint16_t, std::shared_ptr<clan::OobListener>> listeners;
  uint64_t next_vi = 1;
  bool ns_ready = false;
  std::atomic<bool> revoke_on_completion{true};

  // Statistics of VIs destroyed (under mu); live VIs count their own.
  uint64_t pio_sends = 0, dma_sends = 0, dropped_sends = 0, mapping_hits = 0;
  std::atomic<uint64_t> revocations{0};

  // Under mu: the registration covering [p, p+len) with handle h, or null.
  const MemReg* find_mem(VIP_MEM_HANDLE h, const void* p, size_t len) const;
  // Takes r->mu. A posted receive descriptor's region is released (the last
  // one reissues its cookie if RevokeOnCompletion).
  void release(MemRegion* r);
  Vi* find_vi(uint64_t id);
  // Progresses the VI an event names, if it still exists. Shared hold of
  // vi_gate from the lookup to the end: VipDestroyVi takes it exclusively
  // to unlist a VI, so none is deleted under a CQ poller.
  void progress_vi(uint64_t id);
  std::shared_mutex vi_gate;
};

// Statistics only their owner writes: no read-modify-write needed.
using clan::bump;

// Whether m covers [p, p+len).
bool covers(const MemReg& m, const void* p, size_t len);

struct Cq {
  NicImpl* nic;
  clan::EventQueue eq;
  uint32_t kick = 0;  // source for completions found by other threads
  std::atomic<uint32_t> wakes{0};  // VipClanCQWake calls not yet seen by a waiter
  // The event queue has one consumer at a time: the turn is held while
  // polling or waiting on `eq` (VipCQDone only tries for it: the holder
  // progresses the VIs). A mutex and a condition variable rather than a
  // timed mutex, whose timed lock ThreadSanitizer does not see.
  std::mutex turn_mu;
  std::condition_variable turn_cv;
  bool turn_taken = false;
  int turn_waiters = 0;
  // Takes the turn, waiting for it until `deadline`; false if it did not come.
  bool take_turn(clan::Deadline deadline);
  bool try_take_turn();
  void give_turn();
  std::mutex mu;
  Fifo<std::pair<Vi*, bool>> entries;
  size_t capacity;
  uint32_t vis = 0;  // VIs attached (under nic->mu)
  void push(Vi* vi, bool recv);
};

// The shared-memory channel of a connected VI (paper 001 Fig. 3).
struct Conn {
  // Both channel blocks (wire::block_layout), before the rings that use
  // them: destroyed after them.
  clan::Region block;         // ours: the peer writes it
  clan::Aperture peer_block;  // the peer's, mapped once connected
  std::unique_ptr<CookieSender> ck_tx;       // our receive descriptors -> peer
  std::unique_ptr<CookieReceiver> ck_rx;     // peer's receive descriptors
  std::unique_ptr<TransferSender> tq_tx;     // records -> peer
  std::unique_ptr<TransferReceiver> tq_rx;   // peer's records
  std::unique_ptr<clan::DmaStream> dma;      // data + pointer updates, in order
  std::atomic<int> down{0};                  // 1: peer closed, 2: peer died
  Cq* send_cq = nullptr;
  Cq* recv_cq = nullptr;
  uint32_t send_src = 0, recv_src = 0;
  std::shared_ptr<clan::OobConnection> oob;  // last: destroyed first
  void wake();                               // after `down` changed
};

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
  VIP_CLAN_VI_ATTRIBUTES ext{VIP_FALSE, VIP_FALSE, VIP_CLAN_TRANSFER_AUTO, 1024};
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

  // Statistics (VipClanQueryNicStats): written under mu, read by anyone.
  std::atomic<uint64_t> pio_sends{0}, dma_sends{0}, dropped_sends{0}, mapping_hits{0};

  // All under mu.
  // The registration with handle h, or null.
  const MemReg* find_mem(VIP_MEM_HANDLE h);
  // The peer region of cookie c, mapped (PIO mapping cache): last_map, or
  // null with the error in `e`.
  const std::shared_ptr<clan::Aperture>* map(const clan::RdmaCookie& c, clan::Errc& e);
  void progress();
  void poll_records();
  bool pull_cookie();
  void process_sends();
  void complete_sends();
  clan::Errc push_post(const PostedRecv& p);
  void finish_send(QueuedSend& s, uint32_t status);
  void finish_recv(PostedRecv& p, uint32_t status);
  void fail(uint32_t status);  // breaks the connection: state Error, descriptors flushed
  void teardown();             // drops the channel; leaves descriptors alone
};

// Progress is made inside the calls (post, done, wait, CQ): there is no
// library thread. Inline: every data-transfer call makes it.
inline void Vi::progress() {
  if (!conn || state != VIP_STATE_CONNECTED) return;
  const int down = conn->down.load(std::memory_order_acquire);
  if (conn->tq_rx->readable()) poll_records();  // what the peer sent before it went is ours
  if (!conn) return;
  if (down != 0) return fail(down == 2 ? VIP_STATUS_TRANSPORT_ERROR : 0);
  if (sends.empty()) return;
  complete_sends();
  // Sends not yet in flight are the tail of the queue.
  if (conn && !sends.empty() && !sends.back().in_flight) process_sends();
}

// A pending connection request (VipConnectWait's result).
struct ConnReq {
  NicImpl* nic;
  clan::OobRequest request;
  wire::Hello hello;
};

// A VIPL timeout in ms (VIP_INFINITE: none) from now.
inline clan::Deadline deadline_ms(VIP_ULONG ms) {
  if (ms == VIP_INFINITE) return clan::Deadline::never();
  return clan::Deadline::after(std::chrono::milliseconds(ms));
}

// The objects behind VIPL handles, or null for a stale or foreign handle.
inline NicImpl* nic_of(VIP_NIC_HANDLE h) {
  return is_handle(h, Kind::kNic) ? static_cast<NicImpl*>(h) : nullptr;
}
inline Cq* cq_of(VIP_CQ_HANDLE h) { return is_handle(h, Kind::kCq) ? static_cast<Cq*>(h) : nullptr; }
inline Vi* vi_of(VIP_VI_HANDLE h) { return is_handle(h, Kind::kVi) ? static_cast<Vi*>(h) : nullptr; }

inline bool reliable(const Vi& vi) { return vi.attrs.ReliabilityLevel != VIP_SERVICE_UNRELIABLE; }

// Hands the next completed descriptor of `q` back to the application:
// VIP_SUCCESS, or VIP_DESCRIPTOR_ERROR if its status has an error bit.
inline VIP_RETURN take_done(Fifo<Done>& q, VIP_DESCRIPTOR** out) {
  const Done done = q.front();
  q.pop_front();
  *out = done.d;
  unhold(done.block);  // the application's again
  return (done.d->CS.Status & VIP_STATUS_ERROR_MASK) ? VIP_DESCRIPTOR_ERROR : VIP_SUCCESS;
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

// A receive descriptor as the cookie queue (and the handshake) carries it.
size_t encode_post(const PostedRecv& p, std::byte* out);  // out: kCookieMessage bytes
// Parses and checks one from peer-written bytes; `used` is its size.
bool parse_post(const std::byte* p, size_t len, uint64_t expect_seq, size_t& used, RemoteDesc& out);

}  // namespace via
