#include "clan_emul/event_queue.hpp"

#include <utility>

#include "clan_emul/error_detail.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/runner.hpp"
#include "clan_emul/spin_wait.hpp"

namespace clan {

EventQueue::EventQueue(EventQueue&& o) noexcept { *this = std::move(o); }

EventQueue& EventQueue::operator=(EventQueue&& o) noexcept {
  if (this != &o) {
    if (nic_) nic_->release_queue(index_);
    nic_ = std::exchange(o.nic_, nullptr);
    index_ = o.index_;
    mode_ = o.mode_;
    sources_ = std::move(o.sources_);
  }
  return *this;
}

EventQueue::~EventQueue() {
  if (nic_) nic_->release_queue(index_);
}

Result<uint32_t> EventQueue::add_source(uint64_t user) {
  std::lock_guard lock(sources_->mu);
  if (sources_->free.empty()) {
    const auto limit = static_cast<unsigned>(sources_->live.size());
    return set_error(Errc::kNoResources, 0, "NIC '%s': no source left on event queue %u (%u in use, limit %u)",
                     nic_->config().name.c_str(), index_, limit, limit);
  }
  uint32_t s = sources_->free.back();
  sources_->free.pop_back();
  sources_->user[s].store(user, std::memory_order_relaxed);
  sources_->live[s].store(1, std::memory_order_release);
  return s;
}

void EventQueue::remove_source(uint32_t source) {
  std::lock_guard lock(sources_->mu);
  if (source >= sources_->live.size() || !sources_->live[source].load()) return;
  sources_->live[source].store(0, std::memory_order_release);
  sources_->free.push_back(source);
}

uint64_t EventQueue::corrupt_events() const {
  return sources_->corrupt.load(std::memory_order_relaxed);
}

void EventQueue::post(const NicView& view, uint32_t queue, uint32_t source) {
  // Indices come from shared memory: a bad one is dropped, never followed.
  if (queue >= view.max_queues || source >= view.queue_capacity) return;
  EventQueueHeader* h = view.queue(queue);
  if (h->in_use.load(std::memory_order_acquire) == 0) return;
  if (view.queue_pending(queue)[source].exchange(1, std::memory_order_acq_rel) != 0) return;
  note_producer(view.queue_producer(queue));
  const uint32_t pos = h->tail.fetch_add(1, std::memory_order_acq_rel);
  EventSlot& slot = view.queue_slots(queue)[pos & (view.queue_capacity - 1)];
  slot.source.store(source, std::memory_order_relaxed);
  slot.seq.store(pos + 1, std::memory_order_seq_cst);
  wake_sleepers(h->sleepers, h->wakeups);
}

void EventQueue::notify(uint32_t source) { post(nic_->view(), index_, source); }

std::optional<EventQueue::Event> EventQueue::poll() {
  const NicView& v = nic_->view();
  EventQueueHeader* h = v.queue(index_);
  const uint32_t cap = v.queue_capacity;
  for (;;) {
    const uint32_t pos = h->head.load(std::memory_order_relaxed);
    EventSlot& slot = v.queue_slots(index_)[pos & (cap - 1)];
    if (slot.seq.load(std::memory_order_acquire) != pos + 1) return std::nullopt;
    const uint32_t source = slot.source.load(std::memory_order_relaxed);
    h->head.store(pos + 1, std::memory_order_release);
    if (source >= cap || !sources_->live[source].load(std::memory_order_acquire)) {
      sources_->corrupt.fetch_add(1, std::memory_order_relaxed);  // garbage or a removed source: drop it, look further
      if (source < cap) v.queue_pending(index_)[source].store(0, std::memory_order_seq_cst);
      continue;
    }
    // Cleared only now: a firing after this point posts a fresh event.
    v.queue_pending(index_)[source].store(0, std::memory_order_seq_cst);
    return Event{source, sources_->user[source].load(std::memory_order_relaxed)};
  }
}

Result<EventQueue::Event> EventQueue::wait(Deadline deadline, WaitMode mode) {
  std::optional<Event> got;
  EventQueueHeader* h = nic_->view().queue(index_);
  const WaitPolicy policy{mode, nic_->spin_budget().count(), nic_->view().queue_producer(index_)};
  Errc e = wait_on_word([&] { return (got = poll()).has_value(); }, policy, h->sleepers, h->wakeups, deadline);
  if (e != Errc::kOk) return e;
  return *got;
}

}  // namespace clan
