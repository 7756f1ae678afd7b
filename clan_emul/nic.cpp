#include "clan_emul/nic.hpp"

#include <sys/random.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "clan_emul/aperture.hpp"
#include "clan_emul/decimal.hpp"
#include "clan_emul/dma_engine.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/event_queue.hpp"
#include "clan_emul/region.hpp"
#include "clan_emul/resident_set.hpp"
#include "clan_emul/runner.hpp"
#include "clan_emul/tripwire.hpp"

namespace clan {

uint64_t random_u64() {
  uint64_t v = 0;
  while (getrandom(&v, sizeof v, 0) != static_cast<ssize_t>(sizeof v)) {
  }
  return v;
}

std::string Nic::nic_memfd_name(uint64_t nic_id) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "clan-nic-%016llx", static_cast<unsigned long long>(nic_id));
  return buf;
}

static bool power_of_two(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

Nic::Nic(NicConfig config) : config_(std::move(config)) {}

// CLAN_SPIN_NS and CLAN_WAIT_MODE, when set, override the configuration for
// every NIC of the process. Empty is unset, as for CLAN_RUNTIME_DIR.
static Errc apply_environment(NicConfig& config) {
  if (const char* spin = std::getenv("CLAN_SPIN_NS"); spin && *spin) {
    const ParsedValue v = parse_decimal(spin);
    if (v.problem != ValueProblem::kNone || v.value > kMaxSpinNs) {
      return set_error(Errc::kInvalidArgument, 0,
                       "CLAN_SPIN_NS='%s' %s; it takes 0 to %llu nanoseconds, in decimal digits", spin,
                       v.problem != ValueProblem::kNone ? describe(v.problem) : "is out of range",
                       static_cast<unsigned long long>(kMaxSpinNs));
    }
    config.spin_budget = std::chrono::nanoseconds(v.value);
  }
  if (static_cast<unsigned>(config.wait_mode) > static_cast<unsigned>(WaitMode::kBlock)) {
    return set_error(Errc::kInvalidArgument, 0, "NIC '%s': wait mode %u is not one of %s", config.name.c_str(),
                     static_cast<unsigned>(config.wait_mode), kWaitModeWords);
  }
  if (const char* mode = std::getenv("CLAN_WAIT_MODE"); mode && *mode) {
    const std::optional<WaitMode> m = parse_wait_mode(mode);
    if (!m) {
      return set_error(Errc::kInvalidArgument, 0, "CLAN_WAIT_MODE='%s' is not a wait mode; it takes %s", mode,
                       kWaitModeWords);
    }
    config.wait_mode = *m;
  }
  return Errc::kOk;
}

Result<std::unique_ptr<Nic>> Nic::open(NicConfig config) {
  clear_error();
  if (config.max_regions == 0 || config.max_regions > kMaxRegionsLimit ||
      config.max_tripwires == 0 || config.max_tripwires > kMaxTripwiresLimit ||
      config.max_event_queues == 0 || config.max_event_queues > kMaxEventQueuesLimit ||
      !power_of_two(config.event_queue_capacity) ||
      config.event_queue_capacity > kEventQueueCapacityLimit || config.max_imports == 0 ||
      config.dma_queue_depth == 0 || config.max_endpoints > kMaxEndpointsLimit ||
      config.frames == 0) {
    return set_error(Errc::kInvalidArgument, 0, "NIC '%s': a limit of its configuration is 0 or too large",
                     config.name.c_str());
  }
  if (config.max_endpoints == 0) config.max_endpoints = config.event_queue_capacity - 1;
  if (config.max_endpoints >= config.event_queue_capacity) {
    // The re-mapping thread's request queue has a source per endpoint.
    return set_error(Errc::kInvalidArgument, 0,
                     "NIC '%s': %u endpoints need an event queue capacity above that (it is %u)",
                     config.name.c_str(), config.max_endpoints, config.event_queue_capacity);
  }
  if (config.name.empty() || config.name.size() >= sizeof NicHeader::name) {
    return set_error(Errc::kInvalidArgument, 0, "NIC name '%s' is %zu characters; 1 to %zu allowed",
                     config.name.c_str(), config.name.size(), sizeof NicHeader::name - 1);
  }
  if (Errc e = apply_environment(config); e != Errc::kOk) return e;
  runner_table_open();
  std::unique_ptr<Nic> nic(new Nic(std::move(config)));
  const NicConfig& c = nic->config_;
  uint64_t id = random_u64();
  NicLayout layout = NicLayout::compute(c.max_regions, c.max_tripwires, c.max_endpoints,
                                        c.max_event_queues, c.event_queue_capacity);
  auto seg = SharedMemory::create(nic_memfd_name(id), layout.total);
  if (!seg) return append_error_context(seg.error(), "NIC '%s'", c.name.c_str());
  nic->segment_ = std::move(seg.value());
  NicView& v = nic->view_;
  v = NicView{nic->segment_.data(), layout,           c.max_regions, c.max_tripwires,
              c.max_event_queues,    c.event_queue_capacity, c.max_endpoints};
  NicHeader* h = v.header();
  h->version = kNicLayoutVersion;
  h->pid = getpid();
  h->nic_id = id;
  h->max_regions = c.max_regions;
  h->max_tripwires = c.max_tripwires;
  h->max_event_queues = c.max_event_queues;
  h->event_queue_capacity = c.event_queue_capacity;
  h->max_endpoints = c.max_endpoints;
  std::strncpy(h->name, c.name.c_str(), sizeof h->name - 1);
  for (uint32_t i = 0; i < c.max_event_queues; ++i) v.queue(i)->capacity = c.event_queue_capacity;
  std::atomic_ref<uint64_t>(h->magic).store(kNicMagic, std::memory_order_release);

  // Free lists hand out low indices first.
  for (uint32_t i = c.max_regions; i-- > 0;) nic->free_regions_.push_back(i);
  for (uint32_t i = c.max_tripwires; i-- > 0;) nic->free_tripwires_.push_back(i);
  for (uint32_t i = c.max_event_queues; i-- > 0;) nic->free_queues_.push_back(i);
  nic->region_generation_.assign(c.max_regions, 0);
  nic->region_base_.assign(c.max_regions, nullptr);
  if (Errc e = nic->open_wire(); e != Errc::kOk) return append_error_context(e, "NIC '%s'", c.name.c_str());
  return nic;
}

Nic::~Nic() {
  if (getpid() != view_.header()->pid) {
    // A fork()ed child's copy: the threads are the parent's, and the
    // control segment it shares with the parent is not this copy's to
    // change (a child exiting must not stop the parent's re-mapping).
    (void)resident_owner_.release();
    (void)dma_.release();
    (void)wire_.release();
    return;
  }
  // Pending DMA completes before the memory it targets goes away.
  dma_.reset();
  resident_.store(nullptr);
  resident_owner_.reset();
}

DmaEngine& Nic::dma() {
  std::lock_guard lock(mu_);
  if (!dma_) dma_ = std::make_unique<DmaEngine>(config_.dma_queue_depth, config_.spin_budget,
                                                config_.dma_inline_when_idle);
  return *dma_;
}

uint32_t Nic::regions_in_use() const {
  std::lock_guard lock(mu_);
  return config_.max_regions - static_cast<uint32_t>(free_regions_.size());
}
uint32_t Nic::tripwires_in_use() const {
  std::lock_guard lock(mu_);
  return config_.max_tripwires - static_cast<uint32_t>(free_tripwires_.size());
}
uint32_t Nic::imports_in_use() const {
  std::lock_guard lock(mu_);
  return imports_;
}

std::string Nic::region_memfd_name(uint64_t nic_id, uint32_t index, uint32_t generation) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "clan-%016llx-r%u-g%u", static_cast<unsigned long long>(nic_id),
                index, generation);
  return buf;
}

// ---- regions ---------------------------------------------------------------

Result<Region> Nic::export_region(size_t bytes, const Endpoint* endpoint) {
  if (bytes == 0 || bytes > (size_t{1} << 40)) return Errc::kInvalidArgument;
  if (endpoint && endpoint->nic_ != this) return Errc::kInvalidArgument;
  uint32_t index, generation;
  {
    std::lock_guard lock(mu_);
    if (free_regions_.empty()) {
      return set_error(Errc::kNoResources, 0, "NIC '%s': no region left to export (%u in use, limit %u)",
                       config_.name.c_str(), config_.max_regions, config_.max_regions);
    }
    index = free_regions_.back();
    free_regions_.pop_back();
    generation = ++region_generation_[index];
  }
  // The memfd name carries the generation the region was created with, so an
  // importer can tell this memfd from one that later reuses the fd number.
  auto mem = SharedMemory::create(region_memfd_name(id(), index, generation), bytes);
  if (!mem) {
    std::lock_guard lock(mu_);
    free_regions_.push_back(index);
    return mem.error();
  }
  Region r;
  r.nic_ = this;
  r.index_ = index;
  r.memory_ = std::move(mem.value());
  RegionSlot* slot = view_.region(index);
  slot->secret[0] = random_u64();
  slot->secret[1] = random_u64();
  slot->length = r.memory_.size();
  slot->fd = r.memory_.fd();
  slot->memfd_generation = generation;
  slot->tw_head.store(0, std::memory_order_relaxed);
  slot->endpoint.store(0, std::memory_order_relaxed);
  slot->referenced.store(0, std::memory_order_relaxed);
  slot->state.store(region_state(generation, kRegionLive), std::memory_order_release);
  if (endpoint) resident_set().attach_region(endpoint->index(), index);
  {
    std::lock_guard lock(mu_);
    region_base_[index] = r.memory_.data();
  }
  r.cookie_ = RdmaCookie{id(),          getpid(),       segment_.fd(),  index, generation,
                         slot->length, {slot->secret[0], slot->secret[1]}};
  return r;
}

void Nic::release_region(uint32_t index) {
  RegionSlot* slot = view_.region(index);
  uint64_t gen = region_generation(slot->state.load(std::memory_order_relaxed));
  store_region_state(slot->state, gen, kRegionFree);
  // Before the memory goes: the wire writes no more into it.
  close_wire_registration(index);
  // Then detached, which wakes its held writers: they find it free.
  if (ResidentSet* set = resident_.load(std::memory_order_acquire)) set->detach_region(index);
  std::lock_guard lock(mu_);
  region_base_[index] = nullptr;
  free_regions_.push_back(index);
}

// ---- imports ---------------------------------------------------------------

Result<std::shared_ptr<PeerNic>> Nic::map_peer(const RdmaCookie& cookie) {
  // Called with mu_ held.
  auto it = peers_.find(cookie.nic_id);
  if (it != peers_.end()) {
    if (auto p = it->second.lock()) return p;
    peers_.erase(it);
  }
  auto seg = SharedMemory::open_peer(cookie.pid, cookie.nic_fd, nic_memfd_name(cookie.nic_id),
                                     sizeof(NicHeader));
  if (!seg) return seg.error() == Errc::kStaleCookie ? Errc::kForgedCookie : seg.error();
  // Not shared until checked: a shared one dropped here, under mu_, would
  // call forget_peer.
  auto peer = std::make_unique<PeerNic>();
  peer->segment = std::move(seg.value());
  // Nothing in the header is trusted until checked against the real size.
  const NicHeader* h = reinterpret_cast<const NicHeader*>(peer->segment.data());
  uint64_t magic = std::atomic_ref<const uint64_t>(h->magic).load(std::memory_order_acquire);
  if (magic != kNicMagic || h->version != kNicLayoutVersion || h->nic_id != cookie.nic_id ||
      h->max_endpoints == 0 || h->max_endpoints > kMaxEndpointsLimit ||
      h->max_regions == 0 || h->max_regions > kMaxRegionsLimit || h->max_tripwires == 0 ||
      h->max_tripwires > kMaxTripwiresLimit || h->max_event_queues == 0 ||
      h->max_event_queues > kMaxEventQueuesLimit || !power_of_two(h->event_queue_capacity) ||
      h->event_queue_capacity > kEventQueueCapacityLimit) {
    return Errc::kCorrupt;
  }
  NicLayout layout = NicLayout::compute(h->max_regions, h->max_tripwires, h->max_endpoints,
                                        h->max_event_queues, h->event_queue_capacity);
  if (layout.total > peer->segment.size()) return Errc::kCorrupt;
  peer->view = NicView{peer->segment.data(), layout,           h->max_regions,
                       h->max_tripwires,     h->max_event_queues, h->event_queue_capacity,
                       h->max_endpoints};
  peer->nic_id = cookie.nic_id;
  peer->pid = cookie.pid;
  std::shared_ptr<PeerNic> shared(peer.release(), [this](PeerNic* p) {
    forget_peer(p->nic_id);
    delete p;
  });
  peers_[cookie.nic_id] = shared;
  return shared;
}

void Nic::forget_peer(uint64_t nic_id) {
  std::lock_guard lock(mu_);
  // Expired: no aperture maps the peer any longer. Otherwise a later import
  // mapped the same peer afresh, and the entry is that mapping's.
  if (auto it = peers_.find(nic_id); it != peers_.end() && it->second.expired()) peers_.erase(it);
}

size_t Nic::peers_mapped() const {
  std::lock_guard lock(mu_);
  return peers_.size();
}

static Errc cookie_state_error(uint64_t state, uint32_t generation) {
  if (region_generation(state) != generation) return Errc::kStaleCookie;
  if (region_kind(state) == kRegionRevoked) return Errc::kRevokedCookie;
  return Errc::kStaleCookie;  // freed
}

Errc check_cookie(const NicView& v, const RdmaCookie& cookie) {
  if (cookie.region >= v.max_regions) return Errc::kForgedCookie;
  const RegionSlot* slot = v.region(cookie.region);
  const uint64_t want = region_state(cookie.generation, kRegionLive);
  // Residency is not the importer's concern: its writes wait for it.
  const uint64_t before = without_residency(slot->state.load(std::memory_order_acquire));
  if (slot->secret[0] != cookie.secret[0] || slot->secret[1] != cookie.secret[1]) {
    // A wrong secret for the current generation is a forgery; for an older
    // generation we cannot tell forgery from staleness, and say stale.
    return region_generation(before) == cookie.generation ? Errc::kForgedCookie
                                                          : cookie_state_error(before, cookie.generation);
  }
  if (before != want) return cookie_state_error(before, cookie.generation);
  if (cookie.length == 0 || cookie.length > slot->length) return Errc::kForgedCookie;
  return Errc::kOk;
}

Result<Aperture> Nic::import(const RdmaCookie& cookie, const Endpoint* endpoint) {
  if (wire_ && wire_->knows(cookie.nic_id) && !names_local_nic(cookie)) return import_remote(cookie, endpoint);
  if (endpoint && endpoint->nic_ != this) return Errc::kInvalidArgument;
  const bool counted = endpoint == nullptr;
  std::shared_ptr<PeerNic> peer;
  {
    std::lock_guard lock(mu_);
    if (counted && imports_ >= config_.max_imports) {
      return set_error(Errc::kNoResources, 0, "NIC '%s': no imported aperture left (%u in use, limit %u)",
                       config_.name.c_str(), imports_, config_.max_imports);
    }
    auto p = map_peer(cookie);
    if (!p) return p.error();
    peer = std::move(p.value());
    if (counted) ++imports_;
  }
  auto fail = [&](Errc e) -> Result<Aperture> {
    if (counted) release_import();
    return e;
  };
  const NicView& pv = peer->view;
  if (Errc e = check_cookie(pv, cookie); e != Errc::kOk) return fail(e);
  RegionSlot* slot = pv.region(cookie.region);
  const uint64_t want = region_state(cookie.generation, kRegionLive);

  auto mem = SharedMemory::open_peer(cookie.pid, slot->fd,
                                     region_memfd_name(cookie.nic_id, cookie.region,
                                                       slot->memfd_generation),
                                     cookie.length);
  if (!mem) return fail(mem.error() == Errc::kStaleCookie ? Errc::kStaleCookie : mem.error());
  // Re-check: the region may have been freed and its slot reused while we mapped.
  if (const uint64_t now = without_residency(slot->state.load(std::memory_order_acquire)); now != want) {
    return fail(cookie_state_error(now, cookie.generation));
  }
  Aperture a;
  a.nic_ = this;
  a.peer_ = std::move(peer);
  a.memory_ = std::move(mem.value());
  a.base_ = a.memory_.data();
  a.size_ = cookie.length;
  a.slot_ = slot;
  a.expect_state_ = want;
  a.cookie_ = cookie;
  a.counted_ = counted;
  if (endpoint) {
    a.own_endpoint_ = endpoint->index();
    a.own_slot_ = view_.endpoint(endpoint->index());
  }
  return a;
}

void Nic::release_import() {
  std::lock_guard lock(mu_);
  --imports_;
}

// ---- endpoints -------------------------------------------------------------

ResidentSet& Nic::resident_set() { return *resident_.load(std::memory_order_acquire); }

Result<Endpoint> Nic::create_endpoint() {
  {
    std::lock_guard lock(resident_start_mu_);
    if (!resident_owner_) {
      auto set = ResidentSet::start(*this, view_);
      if (!set) return append_error_context(set.error(), "NIC '%s'", config_.name.c_str());
      resident_owner_ = std::move(set.value());
      resident_.store(resident_owner_.get(), std::memory_order_release);
    }
  }
  auto index = resident_set().create();
  if (!index) return index.error();
  Endpoint e;
  e.nic_ = this;
  e.index_ = index.value();
  return e;
}

void Nic::release_endpoint(uint32_t index) { resident_set().destroy(index); }

ResidentSetStats Nic::resident_set_stats() const {
  ResidentSet* set = resident_.load(std::memory_order_acquire);
  if (!set) return ResidentSetStats{config_.frames};
  return set->stats();
}

// ---- tripwires -------------------------------------------------------------

Result<Tripwire> Nic::arm_tripwire(const Region& region, size_t offset, EventQueue* queue,
                                   uint64_t user) {
  if (region.nic_ != this || offset > region.size() || region.size() - offset < 8) {
    return Errc::kInvalidArgument;
  }
  if (queue && queue->nic_ != this) return Errc::kInvalidArgument;
  uint32_t source = 0;
  if (queue) {
    auto s = queue->add_source(user);
    if (!s) return s.error();
    source = s.value();
  }
  std::lock_guard lock(mu_);
  if (free_tripwires_.empty()) {
    if (queue) queue->remove_source(source);
    return set_error(Errc::kNoResources, 0, "NIC '%s': no tripwire left (%u in use, limit %u)",
                     config_.name.c_str(), config_.max_tripwires, config_.max_tripwires);
  }
  uint32_t index = free_tripwires_.back();
  free_tripwires_.pop_back();
  TripwireSlot* t = view_.tripwire(index);
  RegionSlot* r = view_.region(region.index());
  t->sleepers.store(0, std::memory_order_relaxed);
  t->offset.store(offset, std::memory_order_relaxed);
  t->queue.store(queue ? queue->index() + 1 : 0, std::memory_order_relaxed);
  t->source.store(source, std::memory_order_relaxed);
  t->next.store(r->tw_head.load(std::memory_order_relaxed), std::memory_order_relaxed);
  t->region.store(region.index() + 1, std::memory_order_release);
  r->tw_head.store(index + 1, std::memory_order_release);

  Tripwire tw;
  tw.nic_ = this;
  tw.index_ = index;
  tw.region_ = region.index();
  tw.slot_ = t;
  tw.queue_ = queue;
  tw.source_ = source;
  view_.tripwire_producer(index)->store(0, std::memory_order_relaxed);  // its last owner's producer
  tw.policy_ = WaitPolicy{config_.wait_mode, config_.spin_budget.count(), view_.tripwire_producer(index)};
  return tw;
}

void Nic::release_tripwire(uint32_t index) {
  std::lock_guard lock(mu_);
  TripwireSlot* t = view_.tripwire(index);
  uint32_t region = t->region.load(std::memory_order_relaxed) - 1;
  t->region.store(0, std::memory_order_release);  // writers stop matching it first
  RegionSlot* r = view_.region(region);
  // Unlink; a writer standing on this slot still follows its `next`.
  std::atomic<uint32_t>* link = &r->tw_head;
  for (uint32_t i = link->load(std::memory_order_relaxed); i != 0;
       i = link->load(std::memory_order_relaxed)) {
    if (i - 1 == index) {
      link->store(t->next.load(std::memory_order_relaxed), std::memory_order_release);
      break;
    }
    link = &view_.tripwire(i - 1)->next;
  }
  free_tripwires_.push_back(index);
}

// ---- event queues ----------------------------------------------------------

Result<EventQueue> Nic::create_event_queue() {
  uint32_t index;
  {
    std::lock_guard lock(mu_);
    if (free_queues_.empty()) {
      return set_error(Errc::kNoResources, 0, "NIC '%s': no event queue left (%u in use, limit %u)",
                       config_.name.c_str(), config_.max_event_queues, config_.max_event_queues);
    }
    index = free_queues_.back();
    free_queues_.pop_back();
  }
  EventQueueHeader* h = view_.queue(index);
  const uint32_t cap = config_.event_queue_capacity;
  EventSlot* slots = view_.queue_slots(index);
  std::atomic<uint8_t>* pending = view_.queue_pending(index);
  for (uint32_t i = 0; i < cap; ++i) {
    slots[i].seq.store(0, std::memory_order_relaxed);
    pending[i].store(0, std::memory_order_relaxed);
  }
  h->tail.store(0, std::memory_order_relaxed);
  h->head.store(0, std::memory_order_relaxed);
  h->sleepers.store(0, std::memory_order_relaxed);
  h->in_use.store(1, std::memory_order_release);
  EventQueue q;
  q.nic_ = this;
  q.index_ = index;
  q.mode_ = config_.wait_mode;
  view_.queue_producer(index)->store(0, std::memory_order_relaxed);
  q.sources_ = std::make_unique<EventQueue::Sources>(cap);
  for (uint32_t i = cap; i-- > 0;) q.sources_->free.push_back(i);
  return q;
}

void Nic::release_queue(uint32_t index) {
  view_.queue(index)->in_use.store(0, std::memory_order_release);
  std::lock_guard lock(mu_);
  free_queues_.push_back(index);
}

}  // namespace clan
