// The emulated CLAN NIC of one process: its exported regions and their RDMA
// cookies, its tripwire CAM, its asynchronous event queues, its imported
// apertures and its DMA engine. Finite resources are finite here too, with
// kNoResources when one runs out.
//
// Thread safety: every member may be called from any thread. Handles
// (Region, Aperture, Tripwire, EventQueue) must not outlive their Nic.
// After fork(), only the process that opened a Nic may use it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "clan_emul/cookie.hpp"
#include "clan_emul/endpoint.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/nic_layout.hpp"
#include "clan_emul/shared_memory.hpp"
#include "clan_emul/wait_mode.hpp"
#include "clan_emul/wire/wire.hpp"
#include "clan_emul/wire/wire_config.hpp"

namespace clan {

class Aperture;
class DmaEngine;
class EventQueue;
class Region;
class ResidentSet;
class Tripwire;
struct ResidentSetStats;

struct NicConfig {
  std::string name = "clan";          // node name; appears in memfd names (/proc/*/fd)
  uint32_t max_regions = 1024;        // exported regions at once
  uint32_t max_tripwires = 4096;      // tripwire CAM entries (the prototype NIC had 4096)
  uint32_t max_imports = 256;         // imported apertures at once
  uint32_t max_event_queues = 64;
  uint32_t event_queue_capacity = 4096;  // sources per event queue
  uint32_t dma_queue_depth = 1024;       // outstanding DMA requests
  // A request submitted while the DMA engine's thread sleeps is performed
  // by the submitting thread (in order, reported the same way) instead of
  // paying a futex wake-up, tens of microseconds here against the few the
  // copy takes. false: the engine's thread performs every request.
  bool dma_inline_when_idle = true;
  // How long a waiter spins before it sleeps. Spinning keeps the wake-up off
  // the scheduler (a cross-core futex wake-up costs tens of microseconds);
  // sleeping keeps an idle process off the CPU. CLAN_SPIN_NS overrides it.
  // Longer than a futex wake-up here (~25 us): a shorter budget lets two
  // ping-ponging sides both fall asleep on every exchange and stay there.
  std::chrono::nanoseconds spin_budget = std::chrono::microseconds(50);
  // How every wait of this NIC goes: poll, block or adaptive (wait_mode.hpp;
  // a tripwire or event queue may be set otherwise). CLAN_WAIT_MODE overrides it.
  WaitMode wait_mode = WaitMode::kAdaptive;
  // Virtual network endpoints (paper 004 sect. 4.1): an endpoint groups the
  // resources of one communication locus, and a frame holds one resident
  // endpoint. Endpoints beyond the frames stay on the host and are made
  // resident on demand, evicting another. The defaults leave every endpoint
  // of a small program resident.
  // Endpoints at once, resident or not (host memory); below
  // event_queue_capacity, since the re-mapping thread's request queue holds
  // a source per endpoint. 0: event_queue_capacity - 1.
  uint32_t max_endpoints = 0;
  uint32_t frames = 1024;         // endpoints resident at once
  // Random, the paper's (sect. 4.2): as fast as LRU at 8:1 overcommit in
  // bench_contention and fairer, since LRU keeps the busiest clients
  // resident while the others queue for frames.
  Replacement replacement = Replacement::kRandom;
  // The emulated cost of one re-mapping, spent by the re-mapping thread.
  std::chrono::nanoseconds remap_cost = std::chrono::microseconds(20);
  // The remote wire to NICs of other hosts (wire/wire.hpp): off unless
  // `wire.listen` names an address of this host. CLAN_WIRE_LISTEN and
  // CLAN_WIRE_PROVIDER set it when the config leaves it empty.
  WireConfig wire;
};
// The longest spin budget accepted (CLAN_SPIN_NS, -ORBclanSpinNs): a spin of
// more than a second is a mistake, not a tuning.
constexpr uint64_t kMaxSpinNs = 1'000'000'000;

// A peer NIC's control segment, mapped while some aperture into it is open.
struct PeerNic {
  SharedMemory segment;
  NicView view;
  uint64_t nic_id = 0;
  int32_t pid = 0;
};

class Nic final : private wire::WireOwner {
 public:
  static Result<std::unique_ptr<Nic>> open(NicConfig config);
  ~Nic();
  Nic(const Nic&) = delete;
  Nic& operator=(const Nic&) = delete;

  const NicConfig& config() const { return config_; }
  uint64_t id() const { return view_.header()->nic_id; }
  std::chrono::nanoseconds spin_budget() const { return config_.spin_budget; }
  WaitMode wait_mode() const { return config_.wait_mode; }

  // Exports a new zero-filled region of `bytes` bytes (rounded up to pages).
  // With an endpoint, the region is resident only while the endpoint is.
  Result<Region> export_region(size_t bytes, const Endpoint* endpoint = nullptr);
  // Imports a peer's cookie as an outgoing aperture. Forged, stale and revoked
  // cookies are rejected here; a later revocation is caught on each write.
  // With an endpoint, a write through it while the endpoint is not resident
  // asks for residency and goes on; such an aperture does not count against
  // max_imports (its mapping is the endpoint's, held by its frame).
  Result<Aperture> import(const RdmaCookie& cookie, const Endpoint* endpoint = nullptr);
  // Where NICs of other hosts reach this one ("host:port"); empty without a wire.
  std::string wire_address() const;
  // The wire, or nullptr.
  wire::Wire* wire() const { return wire_.get(); }
  // Connects the wire to NIC `nic_id` of another host, listening at
  // `address`: from then on its cookies import as apertures over the wire
  // (checked by that NIC first). kInvalidArgument without a wire;
  // kRefused, kTimeout with words. Idempotent while the link is up.
  Errc connect_wire(uint64_t nic_id, const std::string& address, Deadline deadline);
  // A new endpoint; resident at once if a frame is free.
  Result<Endpoint> create_endpoint();
  // Arms a tripwire on the word at `offset` of a region this NIC exported.
  // With a queue, each firing posts one event (source `user` value) there.
  Result<Tripwire> arm_tripwire(const Region& region, size_t offset, EventQueue* queue = nullptr,
                                uint64_t user = 0);
  Result<EventQueue> create_event_queue();
  // The DMA engine, started on first use.
  DmaEngine& dma();

  // Resource accounting, for tests and diagnostics.
  uint32_t regions_in_use() const;
  uint32_t tripwires_in_use() const;
  uint32_t imports_in_use() const;
  // Peer NICs whose control segment is mapped: those some aperture imports from.
  size_t peers_mapped() const;
  // Frames, endpoints and re-mappings so far.
  ResidentSetStats resident_set_stats() const;

 private:
  friend class Region;
  friend class Aperture;
  friend class Tripwire;
  friend class EventQueue;
  friend class Endpoint;

  explicit Nic(NicConfig config);
  void release_region(uint32_t index);
  void release_tripwire(uint32_t index);
  void release_queue(uint32_t index);
  void release_import();  // one imported aperture fewer
  void release_endpoint(uint32_t index);
  ResidentSet& resident_set();
  Result<std::shared_ptr<PeerNic>> map_peer(const RdmaCookie& cookie);
  // When the last aperture into a peer NIC goes: its entry in peers_ goes too,
  // so that peers long gone leave nothing behind.
  void forget_peer(uint64_t nic_id);
  // The wire's side (nic_wire.cpp).
  Errc open_wire();
  Result<Aperture> import_remote(const RdmaCookie& cookie, const Endpoint* endpoint);
  bool names_local_nic(const RdmaCookie& cookie) const;
  Result<Admitted> admit_remote_import(const RdmaCookie& cookie) override;
  void remote_write_landed(uint32_t region, size_t offset, size_t length) override;
  void close_wire_registration(uint32_t region) {
    if (wire_) wire_->close_registration(region);
  }
  static std::string region_memfd_name(uint64_t nic_id, uint32_t index, uint32_t generation);
  static std::string nic_memfd_name(uint64_t nic_id);
  const NicView& view() const { return view_; }

  NicConfig config_;
  SharedMemory segment_;
  NicView view_;

  mutable std::mutex mu_;  // guards the tables below; never taken on a data path
  std::vector<uint32_t> free_regions_, free_tripwires_, free_queues_;
  std::vector<uint32_t> region_generation_;
  std::map<uint64_t, std::weak_ptr<PeerNic>> peers_;  // mapped peer NICs, by id
  uint32_t imports_ = 0;
  std::unique_ptr<DmaEngine> dma_;
  // Started with the first endpoint, under its own lock (starting it
  // creates an event queue, which takes mu_); read without a lock.
  std::mutex resident_start_mu_;
  std::unique_ptr<ResidentSet> resident_owner_;
  std::atomic<ResidentSet*> resident_{nullptr};
  // Each exported region's memory in this process, by slot (under mu_):
  // where the wire delivers writes from other hosts.
  std::vector<std::byte*> region_base_;
  std::unique_ptr<wire::Wire> wire_;  // last member: closed first
};

// Checks a cookie against the region table of the NIC it names (`v`):
// kOk, or kForgedCookie, kStaleCookie, kRevokedCookie.
Errc check_cookie(const NicView& v, const RdmaCookie& cookie);

// Random bits for ids and secrets (getrandom).
uint64_t random_u64();

}  // namespace clan
