// The resident set of a NIC's endpoints (paper 004 sect. 4): a fixed number
// of frames, bound on demand to the endpoints that communicate, the way
// virtual memory binds pages to frames. The re-mapping thread plays the
// paper's segment driver and its kernel thread (sect. 4.2): it takes
// residency requests from an event queue in the control segment (posted by
// held writers of other processes and by this process's own writes through
// a non-resident endpoint's aperture), evicts a resident endpoint when no
// frame is free, spends the emulated re-mapping cost, and marks the endpoint
// resident, which releases its held writers.
//
// Residency of an endpoint's regions is a bit in each region's state word
// (nic_layout.hpp): writers into a resident endpoint pay nothing for the
// emulation; a writer that finds the bit waits for it to clear.
//
// Thread safety: every member may be called from any thread; the tables
// are guarded by one mutex that no data path takes.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "clan_emul/endpoint.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/event_queue.hpp"
#include "clan_emul/fault_model.hpp"
#include "clan_emul/replacement.hpp"

namespace clan {

struct NicConfig;

// Held writers sleep on their endpoint's `loads` word: this makes them look
// again at their region (residency changed, the region revoked or gone).
void wake_held_writers(const NicView& view, uint32_t endpoint);

struct ResidentSetStats {
  uint32_t frames = 0;
  uint32_t endpoints = 0;  // live, resident or not
  uint32_t resident = 0;
  uint64_t remaps = 0;     // endpoints made resident on demand
  uint64_t evictions = 0;  // endpoints sent back to the host to free a frame
};

class ResidentSet {
 public:
  static Result<std::unique_ptr<ResidentSet>> start(Nic& nic, const NicView& view);
  ~ResidentSet();
  ResidentSet(const ResidentSet&) = delete;
  ResidentSet& operator=(const ResidentSet&) = delete;

  // A new endpoint: resident if a frame is free, else on the host.
  Result<uint32_t> create();
  // Frees it: its frame, its driver-queue source; its remaining regions
  // become plain regions and its held writers re-check.
  void destroy(uint32_t endpoint);
  // The region's residency follows the endpoint's from now on.
  void attach_region(uint32_t endpoint, uint32_t region);
  void detach_region(uint32_t region);
  // Asks for residency from this process: an owner's write through a
  // non-resident endpoint's aperture. Never blocks.
  void request(uint32_t endpoint);
  ResidentSetStats stats() const;

 private:
  struct Entry {
    bool live = false;
    bool resident = false;
    uint64_t serial = 0;  // tells an endpoint from a later one at its index
    uint32_t source = 0;  // on the driver queue
    uint64_t last_use = 0;
    std::vector<uint32_t> regions;
  };
  ResidentSet(Nic& nic, const NicView& view, EventQueue queue);
  void run();
  void make_resident(uint32_t endpoint);
  void sample_use();
  void evict(uint32_t endpoint);
  void load(uint32_t endpoint);
  void set_regions_resident(const Entry& e, bool resident);
  void publish(uint32_t endpoint, Residency r);
  void spend_remap_cost() const;

  const NicView& view_;
  const NicConfig& config_;
  EventQueue queue_;
  uint32_t stop_source_ = 0;
  std::atomic<bool> stopping_{false};

  mutable std::mutex mu_;
  std::vector<Entry> entries_;
  std::vector<uint32_t> free_;
  std::vector<FrameUse> frames_;  // the resident endpoints
  uint64_t tick_ = 0;
  uint64_t serials_ = 0;
  Xoshiro256ss random_;
  std::atomic<uint64_t> remaps_{0}, evictions_{0};
  std::thread thread_;
};

}  // namespace clan
