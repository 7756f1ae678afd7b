// The NIC's control segment: the part of the emulated NIC that peers reach.
// It lives in a memfd mapped by the owner and by every process that imports
// one of the owner's regions, because the emulated NIC logic (cookie check,
// tripwire CAM lookup, event delivery) runs in the writer's process.
//
// Layout: NicHeader | RegionSlot[max_regions] | TripwireSlot[max_tripwires] |
//         EndpointSlot[max_endpoints] |
//         EventQueue[max_event_queues] (each: EventQueueHeader + slots + pending flags) |
//         producer words: uint32_t[max_tripwires + max_event_queues]
// Peers recompute the layout from the header's counts and check it against the
// segment's real size (fstat), so a corrupt header cannot send them out of bounds.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace clan {

constexpr uint64_t kNicMagic = 0x31434e4e414c43ULL;  // "CLANNC1"
constexpr uint32_t kNicLayoutVersion = 2;
// Upper bounds a peer accepts in a header; the owner's config must respect them too.
constexpr uint32_t kMaxRegionsLimit = 1u << 20;
constexpr uint32_t kMaxTripwiresLimit = 1u << 20;
constexpr uint32_t kMaxEventQueuesLimit = 1u << 12;
constexpr uint32_t kEventQueueCapacityLimit = 1u << 20;
constexpr uint32_t kMaxEndpointsLimit = 1u << 20;

struct NicHeader {
  uint64_t magic;
  uint32_t version;
  int32_t pid;
  uint64_t nic_id;  // random; tells a live NIC from a reused pid
  uint32_t max_regions;
  uint32_t max_tripwires;
  uint32_t max_event_queues;
  uint32_t event_queue_capacity;
  char name[64];
  uint32_t max_endpoints;
  // The event queue the NIC's re-mapping thread takes residency requests
  // from: index + 1, 0 until the first endpoint exists.
  std::atomic<uint32_t> driver_queue;
};

// Region state word: (generation << 3) | not-resident bit | kind. A cookie
// carries the generation; a write checks the whole word with one load, so a
// region of a non-resident endpoint (paper 004 sect. 4.1) costs a resident
// one's writers nothing: the bit makes the one comparison fail, and the
// writer takes the slow path that asks for residency.
enum : uint64_t { kRegionFree = 0, kRegionLive = 1, kRegionRevoked = 2 };
constexpr uint64_t kRegionNotResident = 4;
constexpr uint64_t region_state(uint64_t generation, uint64_t kind) { return generation << 3 | kind; }
constexpr uint64_t region_generation(uint64_t state) { return state >> 3; }
constexpr uint64_t region_kind(uint64_t state) { return state & 3; }
constexpr uint64_t without_residency(uint64_t state) { return state & ~kRegionNotResident; }

struct alignas(64) RegionSlot;
// Replaces the generation and kind, keeping the not-resident bit, which the
// re-mapping thread owns.
inline void store_region_state(std::atomic<uint64_t>& state, uint64_t generation, uint64_t kind) {
  uint64_t old = state.load(std::memory_order_relaxed);
  while (!state.compare_exchange_weak(old, region_state(generation, kind) | (old & kRegionNotResident),
                                      std::memory_order_seq_cst)) {
  }
}

struct alignas(64) RegionSlot {
  std::atomic<uint64_t> state;
  uint64_t secret[2];
  uint64_t length;
  int32_t fd;                     // the owner's memfd for the region
  uint32_t memfd_generation;      // generation at export: names the memfd (reissue keeps it)
  std::atomic<uint32_t> tw_head;  // first tripwire on this region: index + 1, 0 = none
  std::atomic<uint32_t> endpoint;  // the endpoint it belongs to: index + 1, 0 = none
  // Set by writers, cleared by the re-mapping thread as it samples use for
  // LRU replacement. Beside `state`, so a writer's check of it is free.
  std::atomic<uint32_t> referenced;
};

// Where an endpoint lives (paper 004 Fig. 2). On the NIC it holds a frame;
// on the host read-only it holds none; on the host read-write it holds none
// yet but has asked for one, and its owner's writes go on meanwhile. (The
// fourth state, paged out to disk, is not emulated: memfds are not swapped
// out while mapped.)
enum class Residency : uint32_t { kFree = 0, kOnHostReadOnly = 1, kOnHostReadWrite = 2, kOnNic = 3 };

struct alignas(64) EndpointSlot {
  std::atomic<uint32_t> residency;  // a Residency
  std::atomic<uint32_t> loads;      // futex word: bumped when it becomes resident or goes
  std::atomic<uint32_t> sleepers;   // writers held for it, asleep on `loads`
  std::atomic<uint32_t> referenced; // set by its owner's writes (LRU sampling)
  std::atomic<uint32_t> source;     // its source id on the driver queue
};

// One CAM entry. `region` is index + 1 while armed; writers match on it, so a
// slot freed while a writer walks the list is simply skipped.
struct alignas(64) TripwireSlot {
  std::atomic<uint32_t> fired;     // fire count; the futex word sleepers wait on
  std::atomic<uint32_t> sleepers;  // threads about to sleep or asleep on `fired`
  std::atomic<uint32_t> region;
  std::atomic<uint32_t> next;      // next tripwire of the same region: index + 1
  std::atomic<uint64_t> offset;    // fires when a write overlaps [offset, offset + 8)
  std::atomic<uint32_t> queue;     // event queue index + 1, 0 = none
  std::atomic<uint32_t> source;    // source id within that queue
};

// A bounded multi-producer single-consumer queue of source ids (Vyukov's
// sequence-numbered slots). A source posts only when its pending flag goes
// 0 -> 1 and the consumer clears it on dequeue, so at most `capacity` events
// are ever queued: the queue cannot overflow.
struct alignas(64) EventQueueHeader {
  std::atomic<uint32_t> tail;  // producers claim positions here
  char pad0[60];
  std::atomic<uint32_t> head;      // consumer only
  std::atomic<uint32_t> sleepers;  // consumer about to sleep
  std::atomic<uint32_t> wakeups;   // futex word the consumer sleeps on
  std::atomic<uint32_t> in_use;    // set by the owner while the queue exists
  uint32_t capacity;
  char pad1[44];
};
struct EventSlot {
  std::atomic<uint32_t> seq;  // == position + 1 when filled for that position
  std::atomic<uint32_t> source;
};

struct NicLayout {
  size_t regions_off;
  size_t tripwires_off;
  size_t endpoints_off;
  size_t queues_off;
  size_t queue_stride;
  size_t producers_off;  // the thread id that last fired each tripwire / posted to each queue
  size_t total;

  static NicLayout compute(uint32_t max_regions, uint32_t max_tripwires, uint32_t max_endpoints,
                           uint32_t max_queues, uint32_t queue_capacity) {
    auto up = [](size_t v) { return (v + 63) & ~size_t{63}; };
    NicLayout l{};
    l.regions_off = up(sizeof(NicHeader));
    l.tripwires_off = l.regions_off + up(sizeof(RegionSlot) * max_regions);
    l.queue_stride = up(sizeof(EventQueueHeader) + sizeof(EventSlot) * queue_capacity +
                        sizeof(std::atomic<uint8_t>) * queue_capacity);
    l.endpoints_off = l.tripwires_off + up(sizeof(TripwireSlot) * max_tripwires);
    l.queues_off = l.endpoints_off + up(sizeof(EndpointSlot) * max_endpoints);
    l.producers_off = l.queues_off + l.queue_stride * max_queues;
    l.total = l.producers_off + up(sizeof(std::atomic<uint32_t>) * (size_t{max_tripwires} + max_queues));
    return l;
  }
};

// Typed views of a mapped control segment.
struct NicView {
  std::byte* base = nullptr;
  NicLayout layout{};
  uint32_t max_regions = 0, max_tripwires = 0, max_queues = 0, queue_capacity = 0;
  uint32_t max_endpoints = 0;

  NicHeader* header() const { return reinterpret_cast<NicHeader*>(base); }
  RegionSlot* region(uint32_t i) const {
    return reinterpret_cast<RegionSlot*>(base + layout.regions_off) + i;
  }
  TripwireSlot* tripwire(uint32_t i) const {
    return reinterpret_cast<TripwireSlot*>(base + layout.tripwires_off) + i;
  }
  EndpointSlot* endpoint(uint32_t i) const {
    return reinterpret_cast<EndpointSlot*>(base + layout.endpoints_off) + i;
  }
  EventQueueHeader* queue(uint32_t i) const {
    return reinterpret_cast<EventQueueHeader*>(base + layout.queues_off + layout.queue_stride * i);
  }
  EventSlot* queue_slots(uint32_t i) const {
    return reinterpret_cast<EventSlot*>(queue(i) + 1);
  }
  std::atomic<uint8_t>* queue_pending(uint32_t i) const {
    return reinterpret_cast<std::atomic<uint8_t>*>(queue_slots(i) + queue_capacity);
  }
  // Where the thread that fires tripwire i (posts to queue i) leaves its id
  // for the adaptive wait (runner.hpp); beside the entries rather than in
  // them, so that a firing writes it only when the producer changes.
  std::atomic<uint32_t>* tripwire_producer(uint32_t i) const {
    return reinterpret_cast<std::atomic<uint32_t>*>(base + layout.producers_off) + i;
  }
  std::atomic<uint32_t>* queue_producer(uint32_t i) const { return tripwire_producer(max_tripwires + i); }
};

}  // namespace clan
