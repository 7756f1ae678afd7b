#include "clan_emul/resident_set.hpp"

#include <algorithm>
#include <system_error>

#include "clan_emul/error_detail.hpp"
#include "clan_emul/futex.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/spin_wait.hpp"

namespace clan {

Result<std::unique_ptr<ResidentSet>> ResidentSet::start(Nic& nic, const NicView& view) {
  auto queue = nic.create_event_queue();
  if (!queue) return append_error_context(queue.error(), "the re-mapping thread's request queue");
  std::unique_ptr<ResidentSet> set(new ResidentSet(nic, view, std::move(queue.value())));
  auto stop = set->queue_.add_source(UINT64_MAX);
  if (!stop) return stop.error();
  set->stop_source_ = stop.value();
  // Writers find the queue from here; endpoints exist only after this.
  view.header()->driver_queue.store(set->queue_.index() + 1, std::memory_order_release);
  try {
    set->thread_ = std::thread([s = set.get()] { s->run(); });
  } catch (const std::system_error& e) {
    view.header()->driver_queue.store(0, std::memory_order_release);
    return set_error(Errc::kNoResources, e.code().value(), "cannot start the re-mapping thread");
  }
  return set;
}

ResidentSet::ResidentSet(Nic& nic, const NicView& view, EventQueue queue)
    : view_(view),
      config_(nic.config()),
      queue_(std::move(queue)),
      entries_(config_.max_endpoints),
      random_(random_u64()) {
  for (uint32_t i = config_.max_endpoints; i-- > 0;) free_.push_back(i);
}

ResidentSet::~ResidentSet() {
  stopping_.store(true, std::memory_order_release);
  queue_.notify(stop_source_);
  if (thread_.joinable()) thread_.join();
  view_.header()->driver_queue.store(0, std::memory_order_release);
}

Result<uint32_t> ResidentSet::create() {
  std::lock_guard lock(mu_);
  if (free_.empty()) {
    return set_error(Errc::kNoResources, 0, "NIC '%s': no endpoint left (%u in use, limit %u)",
                     config_.name.c_str(), config_.max_endpoints, config_.max_endpoints);
  }
  const uint32_t index = free_.back();
  auto source = queue_.add_source(index);
  if (!source) return source.error();
  free_.pop_back();
  Entry& e = entries_[index];
  e = Entry{};
  e.live = true;
  e.serial = ++serials_;
  e.source = source.value();
  EndpointSlot* slot = view_.endpoint(index);
  // `sleepers` is the held writers' own count: it survives reuse.
  slot->source.store(e.source, std::memory_order_relaxed);
  slot->referenced.store(0, std::memory_order_relaxed);
  // A free frame is taken at once: binding on demand matters only when
  // endpoints outnumber frames, and a first write should not fault.
  if (frames_.size() < config_.frames) {
    e.resident = true;
    frames_.push_back(FrameUse{index, ++tick_});
    publish(index, Residency::kOnNic);
  } else {
    publish(index, Residency::kOnHostReadOnly);
  }
  return index;
}

void ResidentSet::destroy(uint32_t endpoint) {
  std::lock_guard lock(mu_);
  Entry& e = entries_[endpoint];
  if (!e.live) return;
  for (uint32_t r : e.regions) {
    view_.region(r)->state.fetch_and(~kRegionNotResident, std::memory_order_seq_cst);
    view_.region(r)->endpoint.store(0, std::memory_order_release);
  }
  std::erase_if(frames_, [&](const FrameUse& f) { return f.endpoint == endpoint; });
  queue_.remove_source(e.source);
  e = Entry{};
  publish(endpoint, Residency::kFree);
  free_.push_back(endpoint);
}

void ResidentSet::attach_region(uint32_t endpoint, uint32_t region) {
  std::lock_guard lock(mu_);
  Entry& e = entries_[endpoint];
  e.regions.push_back(region);
  RegionSlot* slot = view_.region(region);
  slot->endpoint.store(endpoint + 1, std::memory_order_release);
  if (!e.resident) slot->state.fetch_or(kRegionNotResident, std::memory_order_seq_cst);
}

void ResidentSet::detach_region(uint32_t region) {
  RegionSlot* slot = view_.region(region);
  std::lock_guard lock(mu_);
  const uint32_t ep = slot->endpoint.load(std::memory_order_relaxed);
  if (ep == 0) return;
  slot->state.fetch_and(~kRegionNotResident, std::memory_order_seq_cst);
  slot->endpoint.store(0, std::memory_order_release);
  std::erase(entries_[ep - 1].regions, region);
  // Its held writers look again, and find the region free or plain.
  wake_held_writers(view_, ep - 1);
}

void ResidentSet::request(uint32_t endpoint) {
  EndpointSlot* slot = view_.endpoint(endpoint);
  uint32_t expect = static_cast<uint32_t>(Residency::kOnHostReadOnly);
  slot->residency.compare_exchange_strong(expect, static_cast<uint32_t>(Residency::kOnHostReadWrite),
                                          std::memory_order_acq_rel);
  EventQueue::post(view_, queue_.index(), slot->source.load(std::memory_order_relaxed));
}

ResidentSetStats ResidentSet::stats() const {
  std::lock_guard lock(mu_);
  ResidentSetStats s;
  s.frames = config_.frames;
  s.endpoints = config_.max_endpoints - static_cast<uint32_t>(free_.size());
  s.resident = static_cast<uint32_t>(frames_.size());
  s.remaps = remaps_.load(std::memory_order_relaxed);
  s.evictions = evictions_.load(std::memory_order_relaxed);
  return s;
}

void ResidentSet::run() {
  while (!stopping_.load(std::memory_order_acquire)) {
    // The NIC's own thread, like the DMA engine's: adaptive whatever the
    // NIC's mode (a polling re-mapping thread would hold a CPU for good).
    auto ev = queue_.wait(Deadline::never(), WaitMode::kAdaptive);
    if (!ev || ev.value().user == UINT64_MAX) continue;
    make_resident(static_cast<uint32_t>(ev.value().user));
  }
}

void ResidentSet::make_resident(uint32_t endpoint) {
  uint64_t serial = 0;
  {
    std::lock_guard lock(mu_);
    if (endpoint >= entries_.size()) return;
    const Entry& e = entries_[endpoint];
    if (!e.live || e.resident) return;  // a stale or repeated request
    serial = e.serial;
    if (frames_.size() >= config_.frames) {
      sample_use();
      const size_t victim = pick_victim(config_.replacement, frames_, random_.next());
      const uint32_t out = frames_[victim].endpoint;
      frames_[victim] = frames_.back();
      frames_.pop_back();
      evict(out);
    }
    // The frame is taken now; the endpoint is marked resident only once
    // the re-mapping is paid for.
    frames_.push_back(FrameUse{endpoint, ++tick_});
  }
  spend_remap_cost();
  std::lock_guard lock(mu_);
  // Destroyed meanwhile (and perhaps its index reused): destroy() gave the
  // frame back already.
  if (entries_[endpoint].live && entries_[endpoint].serial == serial) load(endpoint);
}

void ResidentSet::sample_use() {
  // A resident endpoint was used since the last sample if a writer marked
  // one of its regions or its owner marked the endpoint: the reference bits
  // of a paging system, read and cleared when a victim is needed.
  ++tick_;
  for (FrameUse& f : frames_) {
    bool used = view_.endpoint(f.endpoint)->referenced.exchange(0, std::memory_order_relaxed) != 0;
    for (uint32_t r : entries_[f.endpoint].regions) {
      used |= view_.region(r)->referenced.exchange(0, std::memory_order_relaxed) != 0;
    }
    if (used) f.last_use = tick_;
  }
}

void ResidentSet::evict(uint32_t endpoint) {
  Entry& e = entries_[endpoint];
  e.resident = false;
  // The bit first: a writer past its check still lands, as a packet already
  // on the wire would; every later one is held.
  set_regions_resident(e, false);
  publish(endpoint, Residency::kOnHostReadOnly);
  evictions_.fetch_add(1, std::memory_order_relaxed);
}

void ResidentSet::load(uint32_t endpoint) {
  Entry& e = entries_[endpoint];
  e.resident = true;
  // The fault that brought it in is a use, as in paging: a held writer
  // marks nothing until it writes.
  view_.endpoint(endpoint)->referenced.store(1, std::memory_order_relaxed);
  set_regions_resident(e, true);
  publish(endpoint, Residency::kOnNic);
  remaps_.fetch_add(1, std::memory_order_relaxed);
}

void ResidentSet::set_regions_resident(const Entry& e, bool resident) {
  for (uint32_t r : e.regions) {
    if (resident) {
      view_.region(r)->state.fetch_and(~kRegionNotResident, std::memory_order_seq_cst);
    } else {
      view_.region(r)->state.fetch_or(kRegionNotResident, std::memory_order_seq_cst);
    }
  }
}

void ResidentSet::publish(uint32_t endpoint, Residency r) {
  view_.endpoint(endpoint)->residency.store(static_cast<uint32_t>(r), std::memory_order_seq_cst);
  // Residency granted or withdrawn, or the endpoint gone.
  wake_held_writers(view_, endpoint);
}

void wake_held_writers(const NicView& view, uint32_t endpoint) {
  EndpointSlot* slot = view.endpoint(endpoint);
  slot->loads.fetch_add(1, std::memory_order_seq_cst);
  if (slot->sleepers.load(std::memory_order_seq_cst) != 0) futex_wake_all(&slot->loads);
}

void ResidentSet::spend_remap_cost() const {
  // Re-mapping is host CPU work (unmapping, moving the endpoint to the NIC,
  // new translations: paper 004 sect. 4.2), so it is spent on the CPU.
  const uint64_t until = now_ns() + static_cast<uint64_t>(config_.remap_cost.count());
  while (now_ns() < until && !stopping_.load(std::memory_order_relaxed)) cpu_relax();
}

}  // namespace clan
