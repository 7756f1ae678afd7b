// The asynchronous event queue: events from many sources (tripwires, DMA
// completions, connection managers) gathered in one queue in the NIC's shared
// control segment and dequeued at user level in O(1). A source that already
// has an event pending adds no second one, so the queue cannot overflow.
// Events are hints: the consumer re-reads the state they point at.
//
// Thread safety: any thread of any process may post; one thread at a time
// may poll()/wait().
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "clan_emul/deadline.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/nic_layout.hpp"
#include "clan_emul/wait_mode.hpp"

namespace clan {

class Nic;

class EventQueue {
 public:
  struct Event {
    uint32_t source;
    uint64_t user;  // the value given when the source was added
  };

  EventQueue() = default;
  EventQueue(EventQueue&&) noexcept;
  EventQueue& operator=(EventQueue&&) noexcept;
  ~EventQueue();

  // Registers a source; kNoResources when the queue has `capacity` sources.
  Result<uint32_t> add_source(uint64_t user);
  void remove_source(uint32_t source);
  // Posts an event for `source` from this process (no-op if one is pending).
  void notify(uint32_t source);
  // Dequeues one event if there is one.
  std::optional<Event> poll();
  // Waits for an event in its wait mode (the NIC's unless set): adaptive
  // spins for the NIC's spin budget while the thread that posted last runs
  // on another CPU, then sleeps.
  Result<Event> wait(Deadline deadline) { return wait(deadline, mode_); }
  Result<Event> wait(Deadline deadline, WaitMode mode);
  // Its waits follow `mode` from now on (not thread-safe against a
  // concurrent wait).
  void set_wait_mode(WaitMode mode) { mode_ = mode; }
  WaitMode wait_mode() const { return mode_; }

  uint32_t index() const { return index_; }
  bool valid() const { return nic_ != nullptr; }
  // Events dropped because shared memory named no registered source.
  uint64_t corrupt_events() const;

  // The delivery path of every producer, in whichever process it runs.
  static void post(const NicView& view, uint32_t queue, uint32_t source);

 private:
  friend class Nic;
  struct Sources {
    explicit Sources(uint32_t capacity) : user(capacity), live(capacity) {}
    std::mutex mu;  // registration only; the event path reads the atomics
    std::vector<std::atomic<uint64_t>> user;
    std::vector<std::atomic<uint8_t>> live;
    std::vector<uint32_t> free;
    std::atomic<uint64_t> corrupt{0};
  };
  Nic* nic_ = nullptr;
  uint32_t index_ = 0;
  WaitMode mode_ = WaitMode::kAdaptive;
  std::unique_ptr<Sources> sources_;
};

}  // namespace clan
