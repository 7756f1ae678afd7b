// The asynchronous event queue: many sources, one pending event per source,
// O(1) dequeue, blocking wait, and garbage from shared memory dropped.
#include <catch2/catch.hpp>

#include <set>
#include <thread>
#include <vector>

#include "clan_emul/aperture.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/event_queue.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/region.hpp"
#include "clan_emul/tripwire.hpp"
#include "support/child_process.hpp"

using namespace clan;
using namespace std::chrono_literals;

TEST_CASE("a source with an event pending adds no second one", "[event_queue]") {
  auto nic = std::move(Nic::open({}).value());
  auto q = std::move(nic->create_event_queue().value());
  auto s = q.add_source(1234);
  REQUIRE(s.ok());
  for (int i = 0; i < 100; ++i) q.notify(s.value());
  auto e = q.poll();
  REQUIRE(e.has_value());
  CHECK(e->source == s.value());
  CHECK(e->user == 1234);
  CHECK_FALSE(q.poll().has_value());
  q.notify(s.value());  // dequeued: a new firing posts again
  CHECK(q.poll().has_value());
}

TEST_CASE("every source of a full queue fires repeatedly without overflow", "[event_queue]") {
  NicConfig c;
  c.event_queue_capacity = 256;
  auto nic = std::move(Nic::open(c).value());
  auto q = std::move(nic->create_event_queue().value());
  std::vector<uint32_t> sources;
  for (uint32_t i = 0; i < 256; ++i) sources.push_back(q.add_source(i).value());
  CHECK(q.add_source(999).error() == Errc::kNoResources);
  CHECK_THAT(error_message(Errc::kNoResources), Catch::Contains("no source left on event queue"));
  CHECK_THAT(error_message(Errc::kNoResources), Catch::Contains("(256 in use, limit 256)"));
  for (int round = 0; round < 5; ++round) {
    for (uint32_t s : sources) q.notify(s);
    for (uint32_t s : sources) q.notify(s);
    std::set<uint64_t> seen;
    while (auto e = q.poll()) CHECK(seen.insert(e->user).second);
    CHECK(seen.size() == 256);
  }
}

TEST_CASE("tripwires of many regions deliver into one queue", "[event_queue][tripwire]") {
  auto owner = std::move(Nic::open({}).value());
  auto writer = std::move(Nic::open({}).value());
  auto q = std::move(owner->create_event_queue().value());
  std::vector<Region> regions;
  std::vector<Tripwire> tws;
  std::vector<Aperture> aps;
  for (uint64_t i = 0; i < 32; ++i) {
    regions.push_back(std::move(owner->export_region(4096).value()));
    tws.push_back(std::move(owner->arm_tripwire(regions.back(), 0, &q, i).value()));
    aps.push_back(std::move(writer->import(regions.back().cookie()).value()));
  }
  for (uint64_t i = 0; i < 32; i += 2) aps[i].write_word(0, i);
  std::set<uint64_t> seen;
  while (auto e = q.poll()) seen.insert(e->user);
  std::set<uint64_t> want;
  for (uint64_t i = 0; i < 32; i += 2) want.insert(i);
  CHECK(seen == want);
}

TEST_CASE("wait blocks until an event arrives and times out otherwise", "[event_queue]") {
  NicConfig c;
  c.spin_budget = 0ns;
  auto nic = std::move(Nic::open(c).value());
  auto q = std::move(nic->create_event_queue().value());
  auto s = q.add_source(7).value();
  CHECK(q.wait(Deadline::after(20ms)).error() == Errc::kTimeout);
  std::thread t([&] { q.notify(s); });
  auto e = q.wait(Deadline::after(20s));
  t.join();
  REQUIRE(e.ok());
  CHECK(e->user == 7);
}

TEST_CASE("garbage source ids written into the queue are dropped and counted",
          "[event_queue][hostile]") {
  auto nic = std::move(Nic::open({}).value());
  auto q = std::move(nic->create_event_queue().value());
  auto s = q.add_source(1).value();
  // A writer with access to the control segment posts for a source nobody
  // registered, and for one out of range (dropped at once by post()).
  q.notify(s + 1);
  q.notify(1u << 30);
  q.notify(s);
  auto e = q.poll();
  REQUIRE(e.has_value());
  CHECK(e->source == s);
  CHECK(q.corrupt_events() == 1);
  CHECK_FALSE(q.poll().has_value());
}

TEST_CASE("events posted from another process arrive once per pending source",
          "[event_queue][multiprocess]") {
  auto owner = std::move(Nic::open({}).value());
  auto q = std::move(owner->create_event_queue().value());
  std::vector<Region> regions;
  std::vector<Tripwire> tws;
  std::vector<RdmaCookie> cookies;
  for (uint64_t i = 0; i < 16; ++i) {
    regions.push_back(std::move(owner->export_region(4096).value()));
    tws.push_back(std::move(owner->arm_tripwire(regions.back(), 0, &q, i).value()));
    cookies.push_back(regions.back().cookie());
  }
  test::ChildProcess child([&] {
    auto nic = Nic::open({});
    std::vector<Aperture> aps;
    for (auto& c : cookies) {
      auto ap = (*nic)->import(c);
      if (!ap) return 1;
      aps.push_back(std::move(ap.value()));
    }
    for (uint64_t round = 1; round <= 200; ++round)
      for (auto& ap : aps) ap.write_word(0, round);
    return 0;
  });
  // Drain while the child writes: never more than one event per source is queued.
  uint64_t events = 0;
  std::set<uint64_t> sources;
  auto all_done = [&] {
    for (auto& r : regions)
      if (std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(r.data())).load() != 200)
        return false;
    return true;
  };
  auto limit = Deadline::after(20s);
  while (!limit.expired()) {
    auto e = q.wait(Deadline::after(100ms));
    if (e) {
      ++events;
      sources.insert(e->user);
    } else if (all_done()) {
      break;
    }
  }
  CHECK(child.wait() == 0);
  CHECK(sources.size() == 16);
  CHECK(events <= 16 * 200);
  CHECK(q.corrupt_events() == 0);
}
