// Completion queues: one clan::EventQueue each, whose events name the VI to
// progress; the completions found become entries, taken by VipCQDone and
// VipCQWait. One thread at a time consumes the events (the turn).
#include <algorithm>
#include <optional>

#include "via/internal.hpp"

namespace via {

bool Cq::take_turn(clan::Deadline deadline) {
  std::unique_lock lock(turn_mu);
  if (turn_taken) {
    ++turn_waiters;
    auto free = [&] { return !turn_taken; };
    const bool came = deadline.is_never() ? (turn_cv.wait(lock, free), true)
                                          : turn_cv.wait_until(lock, deadline.when(), free);
    --turn_waiters;
    if (!came) return false;
  }
  turn_taken = true;
  return true;
}

bool Cq::try_take_turn() {
  std::lock_guard lock(turn_mu);
  if (turn_taken) return false;
  turn_taken = true;
  return true;
}

void Cq::give_turn() {
  std::lock_guard lock(turn_mu);
  turn_taken = false;
  if (turn_waiters > 0) turn_cv.notify_one();
}

void Cq::progress(uint64_t id) {
  const bool held = nic->progress_vi(id);
  auto at = std::find(held_vis.begin(), held_vis.end(), id);
  if (held && at == held_vis.end()) held_vis.push_back(id);  // rare: the slow path
  if (!held && at != held_vis.end()) held_vis.erase(at);
}

void Cq::progress_held() {
  for (size_t i = 0; i < held_vis.size();) {
    if (nic->progress_vi(held_vis[i])) {
      ++i;
    } else {
      held_vis.erase(held_vis.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
}

void Cq::push(Vi* vi, bool recv) {
  {
    std::lock_guard lock(mu);
    if (recv && vi->cq_readiness) {
      // The entry already queued says "this VI has receive completions";
      // it covers this one too.
      if (vi->recv_entry_queued) return;
      vi->recv_entry_queued = true;
    }
    entries.push_back({vi, recv});
  }
  eq.notify(kick);
}

}  // namespace via

using namespace via;

extern "C" {

VIP_RETURN VipCreateCQ(VIP_NIC_HANDLE NicHandle, VIP_ULONG EntryCount, VIP_CQ_HANDLE* CQHandle) {
  NicImpl* n = nic_of(NicHandle);
  if (!n || !CQHandle || EntryCount == 0 || EntryCount > kMaxCqEntries) {
    return VIP_INVALID_PARAMETER;
  }
  auto eq = n->nic->create_event_queue();
  if (!eq) return VIP_ERROR_RESOURCE;
  auto* cq = new Cq();
  cq->nic = n;
  cq->eq = std::move(eq.value());
  cq->capacity = EntryCount;
  auto kick = cq->eq.add_source(0);
  if (!kick) {
    delete cq;
    return VIP_ERROR_RESOURCE;
  }
  cq->kick = *kick;
  {
    std::lock_guard lock(n->mu);
    n->cqs.insert(cq);
  }
  register_handle(cq, Kind::kCq);
  *CQHandle = cq;
  return VIP_SUCCESS;
}

VIP_RETURN VipDestroyCQ(VIP_CQ_HANDLE CQHandle) {
  Cq* cq = cq_of(CQHandle);
  if (!cq) return VIP_INVALID_PARAMETER;
  NicImpl* n = cq->nic;
  {
    std::lock_guard lock(n->mu);
    if (cq->vis > 0) return VIP_INVALID_STATE;
    n->cqs.erase(cq);
  }
  unregister_handle(cq);
  delete cq;
  return VIP_SUCCESS;
}

VIP_RETURN VipResizeCQ(VIP_CQ_HANDLE CQHandle, VIP_ULONG EntryCount) {
  Cq* cq = cq_of(CQHandle);
  if (!cq || EntryCount == 0 || EntryCount > kMaxCqEntries) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(cq->mu);
  if (EntryCount < cq->entries.size()) return VIP_INVALID_PARAMETER;
  cq->capacity = EntryCount;
  return VIP_SUCCESS;
}

VIP_RETURN VipCQDone(VIP_CQ_HANDLE CQHandle, VIP_VI_HANDLE* ViHandle, VIP_BOOLEAN* RecvQueue) {
  Cq* cq = cq_of(CQHandle);
  if (!cq || !ViHandle || !RecvQueue) return VIP_INVALID_PARAMETER;
  // Completions are found by progressing the VIs the events name; while
  // another thread consumes the events, it does that.
  if (cq->try_take_turn()) {
    while (auto ev = cq->eq.poll()) {
      if (ev->source == cq->kick) continue;
      cq->progress(ev->user);
    }
    if (!cq->held_vis.empty()) cq->progress_held();
    cq->give_turn();
  }
  std::lock_guard lock(cq->mu);
  if (cq->entries.empty()) return VIP_NOT_DONE;
  *ViHandle = cq->entries.front().first;
  *RecvQueue = cq->entries.front().second ? VIP_TRUE : VIP_FALSE;
  if (cq->entries.front().second) cq->entries.front().first->recv_entry_queued = false;
  cq->entries.pop_front();
  return VIP_SUCCESS;
}

VIP_RETURN VipCQWait(VIP_CQ_HANDLE CQHandle, VIP_ULONG Timeout, VIP_VI_HANDLE* ViHandle,
                     VIP_BOOLEAN* RecvQueue) {
  Cq* cq = cq_of(CQHandle);
  if (!cq || !ViHandle || !RecvQueue) return VIP_INVALID_PARAMETER;
  const clan::Deadline deadline = deadline_ms(Timeout);
  for (;;) {
    if (VipCQDone(CQHandle, ViHandle, RecvQueue) == VIP_SUCCESS) return VIP_SUCCESS;
    uint32_t w = cq->wakes.load(std::memory_order_acquire);
    while (w != 0 && !cq->wakes.compare_exchange_weak(w, w - 1, std::memory_order_acq_rel)) {
    }
    if (w != 0) return VIP_NOT_DONE;
    // One thread waits on the event queue; the others queue here. The one
    // that gets an event and progresses a VI takes the entry, or leaves it
    // to the next in line (whose VipCQDone finds it).
    if (!cq->take_turn(deadline)) return VIP_TIMEOUT;
    bool found;  // what the previous holder found, or a wake, while we queued
    {
      std::lock_guard lock(cq->mu);
      found = !cq->entries.empty() || cq->wakes.load(std::memory_order_acquire) != 0;
    }
    std::optional<clan::EventQueue::Event> ev;
    bool retried = false;
    if (!found) {
      // No event comes when a held VI's peer becomes resident (paper 004
      // sect. 3.2): the held VIs were retried just now (VipCQDone), and the
      // wait is cut to a slice, after which they are retried again. No VI's
      // lock is held meanwhile.
      clan::Deadline until = deadline;
      if (!cq->held_vis.empty()) {
        const auto slice = clan::Deadline::after(Vi::kHeldSlice);
        if (slice.when() < deadline.when()) {
          until = slice;
          retried = true;
        }
      }
      auto r = cq->eq.wait(until, cq->nic->effective_wait_mode());
      if (r) ev = r.value();
    }
    if (ev && ev->source != cq->kick) cq->progress(ev->user);
    cq->give_turn();
    if (!found && !ev && !retried) return VIP_TIMEOUT;
  }
}

VIP_RETURN VipClanCQWake(VIP_CQ_HANDLE CQHandle) {
  Cq* cq = cq_of(CQHandle);
  if (!cq) return VIP_INVALID_PARAMETER;
  cq->wakes.fetch_add(1, std::memory_order_acq_rel);
  cq->eq.notify(cq->kick);
  return VIP_SUCCESS;
}

}  // extern "C"
