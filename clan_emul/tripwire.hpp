// A tripwire: a CAM entry that fires when a network write (PIO or DMA)
// overlaps the 8-byte word it watches in a region this NIC exported. A firing
// bumps the tripwire's count, wakes threads blocked on it, and posts an event
// to its event queue if it has one.
#pragma once

#include <atomic>
#include <cstdint>

#include "clan_emul/deadline.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/nic_layout.hpp"
#include "clan_emul/spin_wait.hpp"
#include "clan_emul/wait_mode.hpp"

namespace clan {

class EventQueue;
class Nic;

// Fires one CAM entry: the writer-side logic, run in the writer's process.
// `producer`: the firing thread is the one its waiters wait for (a network
// write), not a local poke, which must not name itself the producer.
void fire_tripwire(const NicView& view, TripwireSlot* slot, bool producer = true);
// Fires every tripwire of region `region` (its slot `slot`) whose word
// [offset, offset+len) overlaps: the CAM lookup of a network write. The
// list may live in a peer's memory: the walk is bounded and every index
// checked.
void fire_region_tripwires(const NicView& view, const RegionSlot* slot, uint32_t region, size_t offset,
                           size_t len, bool producer = true);

class Tripwire {
 public:
  Tripwire() = default;
  Tripwire(Tripwire&& o) noexcept;
  Tripwire& operator=(Tripwire&& o) noexcept;
  ~Tripwire() { reset(); }

  // How many times it has fired (wraps at 2^32).
  uint32_t fired() const { return slot_->fired.load(std::memory_order_acquire); }
  // Waits until ready() holds, in its wait mode (the NIC's unless set):
  // adaptive spins for the NIC's spin budget while the thread that fired it
  // last runs on another CPU, then sleeps until a firing (or poke()) and
  // checks again. ready() must read the state the tripwire guards, so that
  // no firing can be missed.
  template <class Ready>
  Errc wait(Ready ready, Deadline deadline) const;
  // The same wait in `mode`, for a caller with a mode of its own (a VIA VI).
  template <class Ready>
  Errc wait(Ready ready, Deadline deadline, WaitMode mode) const;
  // Threads announced as sleeping on it (for tests of the blocking path).
  uint32_t sleepers() const { return slot_->sleepers.load(std::memory_order_acquire); }
  // This tripwire's waits follow `mode` from now on (not thread-safe against
  // a concurrent wait).
  void set_wait_mode(WaitMode mode) { policy_.mode = mode; }
  WaitMode wait_mode() const { return policy_.mode; }
  // Directs firings into `queue` as `source` from now on (nullptr: no queue).
  // The caller owns that source. Cheap: two atomic stores.
  void set_queue(EventQueue* queue, uint32_t source);
  // A hint that set_queue() is coming: fetches the entry's line for writing
  // now (a writer's firing reads it, which takes it away). Writes nothing.
  void prefetch_for_set_queue() const { __builtin_prefetch(slot_, 1); }
  // Fires it locally: wakes waiters so they re-check (e.g. on peer death).
  void poke() const;
  // Wakes its waiters so they re-check, without posting to its event queue:
  // for state a waiter's ready() reads that changed by other means. The
  // system call happens only if a waiter sleeps.
  void wake_waiters() const;
  bool valid() const { return nic_ != nullptr; }
  void reset();

 private:
  friend class Nic;
  Nic* nic_ = nullptr;
  uint32_t index_ = 0;
  uint32_t region_ = 0;
  TripwireSlot* slot_ = nullptr;
  EventQueue* queue_ = nullptr;
  uint32_t source_ = 0;
  WaitPolicy policy_;
};

template <class Ready>
Errc Tripwire::wait(Ready ready, Deadline deadline) const {
  return wait_on_word(ready, policy_, slot_->sleepers, slot_->fired, deadline);
}

template <class Ready>
Errc Tripwire::wait(Ready ready, Deadline deadline, WaitMode mode) const {
  WaitPolicy policy = policy_;
  policy.mode = mode;
  return wait_on_word(ready, policy, slot_->sleepers, slot_->fired, deadline);
}

}  // namespace clan
