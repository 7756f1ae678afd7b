#include "clan_emul/tripwire.hpp"

#include <utility>

#include "clan_emul/event_queue.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/runner.hpp"

namespace clan {

void fire_tripwire(const NicView& view, TripwireSlot* slot, bool producer) {
  // Its waiters spin only while the thread that answers them runs elsewhere.
  if (producer) note_producer(view.tripwire_producer(static_cast<uint32_t>(slot - view.tripwire(0))));
  runner_running();
  // The increment orders the write that fired us before the sleeper check
  // (it is a full barrier), pairing with the waiter's announce-then-recheck.
  slot->fired.fetch_add(1, std::memory_order_seq_cst);
  if (slot->sleepers.load(std::memory_order_seq_cst) != 0) futex_wake_all(&slot->fired);
  uint32_t q = slot->queue.load(std::memory_order_acquire);
  if (q != 0) EventQueue::post(view, q - 1, slot->source.load(std::memory_order_relaxed));
}

void fire_region_tripwires(const NicView& v, const RegionSlot* slot, uint32_t region, size_t offset, size_t len,
                           bool producer) {
  const uint32_t tag = region + 1;
  uint32_t i = slot->tw_head.load(std::memory_order_acquire);
  for (uint32_t steps = 0; i != 0 && i <= v.max_tripwires && steps < v.max_tripwires; ++steps) {
    TripwireSlot* t = v.tripwire(i - 1);
    if (t->region.load(std::memory_order_acquire) == tag) {
      uint64_t o = t->offset.load(std::memory_order_relaxed);
      if (o < offset + len && offset < o + 8) fire_tripwire(v, t, producer);
    }
    i = t->next.load(std::memory_order_acquire);
  }
}

Tripwire::Tripwire(Tripwire&& o) noexcept { *this = std::move(o); }

Tripwire& Tripwire::operator=(Tripwire&& o) noexcept {
  if (this != &o) {
    reset();
    nic_ = std::exchange(o.nic_, nullptr);
    index_ = o.index_;
    region_ = o.region_;
    slot_ = o.slot_;
    queue_ = o.queue_;
    source_ = o.source_;
    policy_ = o.policy_;
  }
  return *this;
}

void Tripwire::reset() {
  if (!nic_) return;
  nic_->release_tripwire(index_);
  if (queue_) queue_->remove_source(source_);
  nic_ = nullptr;
}

void Tripwire::set_queue(EventQueue* queue, uint32_t source) {
  if (queue) slot_->source.store(source, std::memory_order_relaxed);
  slot_->queue.store(queue ? queue->index() + 1 : 0, std::memory_order_seq_cst);
}

void Tripwire::poke() const { fire_tripwire(nic_->view(), slot_, false); }

void Tripwire::wake_waiters() const {
  slot_->fired.fetch_add(1, std::memory_order_seq_cst);
  if (slot_->sleepers.load(std::memory_order_seq_cst) != 0) futex_wake_all(&slot_->fired);
}

}  // namespace clan
