// The objects behind the VIPL handles. Internal to via/.
//
// Locks: a VI's mutex may be held while taking its NIC's or a CQ's mutex,
// never the other way round. Nothing blocks while holding a lock, except the
// bounded wait for a VI's own DMA when it disconnects.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "clan_emul/dma_stream.hpp"
#include "clan_emul/dmq_receiver.hpp"
#include "clan_emul/dmq_sender.hpp"
#include "clan_emul/event_queue.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/oob_listener.hpp"
#include "clan_emul/oob_manager.hpp"
#include "clan_emul/region.hpp"
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
constexpr size_t kCookieRing = 256 * 1024;
constexpr size_t kCookieMessage = 1024;
static_assert(sizeof(wire::PostHeader) + kMaxSegments * sizeof(wire::PostSegment) <=
              kCookieMessage);

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
  uint32_t outstanding = 0;  // posted receive descriptors using it
};

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
  VIP_MEM_HANDLE next_mem = 1;
  std::set<Ptag*> ptags;
  std::map<uint64_t, Vi*> vis;  // by id
  std::set<Cq*> cqs;
  std::map<uint16_t, std::unique_ptr<clan::OobListener>> listeners;
  uint64_t next_vi = 1;
  bool ns_ready = false;
  bool revoke_on_completion = true;

  std::atomic<uint64_t> pio_sends{0}, dma_sends{0}, dropped_sends{0}, revocations{0};

  // Under mu: the registration covering [p, p+len) with handle h, or null.
  const MemReg* find_mem(VIP_MEM_HANDLE h, const void* p, size_t len) const;
  // Takes mu. A posted receive descriptor's regions: in use / released
  // (released last: its cookie is reissued if RevokeOnCompletion).
  void hold(MemRegion* r);
  void release(MemRegion* r);
  Vi* find_vi(uint64_t id);
};

struct Cq {
  NicImpl* nic;
  clan::EventQueue eq;
  uint32_t kick = 0;  // source for completions found by other threads
  std::atomic<uint32_t> wakes{0};  // VipClanCQWake calls not yet seen by a waiter
  std::mutex mu;
  std::deque<std::pair<Vi*, bool>> entries;
  size_t capacity;
  uint32_t vis = 0;  // VIs attached (under nic->mu)
  void push(Vi* vi, bool recv);
};

// The shared-memory channel of a connected VI (paper 001 Fig. 3).
struct Conn {
  std::unique_ptr<clan::DmqSender> ck_tx;    // our receive descriptors -> peer
  std::unique_ptr<clan::DmqReceiver> ck_rx;  // peer's receive descriptors
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

struct PostedRecv {
  VIP_DESCRIPTOR* d;
  uint64_t seq;
  uint32_t capacity;
  bool split;
  std::vector<wire::PostSegment> segs;
  std::vector<MemRegion*> regions;
};

struct QueuedSend {
  VIP_DESCRIPTOR* d;
  uint32_t total;
  std::vector<std::pair<const std::byte*, uint32_t>> segs;
  bool in_flight = false;
  uint64_t ticket = 0;
  uint32_t status = 0;  // completion status once in flight
  std::vector<std::shared_ptr<clan::Aperture>> pins;
};

struct RemoteDesc {
  uint64_t seq;
  uint32_t capacity;
  bool split;
  std::vector<wire::PostSegment> segs;
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
  std::deque<PostedRecv> posted;
  std::deque<QueuedSend> sends;
  std::deque<RemoteDesc> remote;
  std::deque<VIP_DESCRIPTOR*> send_done, recv_done;
  // Receive completions so far: VipRecvWait also waits for one found by
  // another thread (e.g. one polling a completion queue).
  std::atomic<uint64_t> recv_completions{0};

  // All under mu.
  void progress();
  void poll_records();
  void pull_cookies();
  void process_sends();
  void complete_sends();
  clan::Errc push_post(const PostedRecv& p);
  void finish_send(QueuedSend& s, uint32_t status);
  void finish_recv(PostedRecv& p, uint32_t status);
  void fail(uint32_t status);  // breaks the connection: state Error, descriptors flushed
  void teardown();             // drops the channel; leaves descriptors alone
};

// A pending connection request (VipConnectWait's result).
struct ConnReq {
  NicImpl* nic;
  clan::OobRequest request;
  wire::Hello hello;
};

clan::Deadline deadline_ms(VIP_ULONG ms);

// A receive descriptor as the cookie queue (and the handshake) carries it.
size_t encode_post(const PostedRecv& p, std::byte* out);  // out: kCookieMessage bytes
// Parses and checks one from peer-written bytes; `used` is its size.
bool parse_post(const std::byte* p, size_t len, uint64_t expect_seq, size_t& used, RemoteDesc& out);

}  // namespace via
