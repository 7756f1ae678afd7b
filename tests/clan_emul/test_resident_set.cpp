// The resident set (paper 004 sect. 4): endpoints beyond the NIC's frames
// stay on the host, writers to them are held until the re-mapping thread
// makes them resident (nothing is lost), owners' writes through their
// apertures go on while residency is granted in the background, and a held
// write is returned to its sender when its endpoint or its owner goes.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "clan_emul/aperture.hpp"
#include "clan_emul/endpoint.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/region.hpp"
#include "clan_emul/resident_set.hpp"
#include "tests/clan_emul/resident_loci.hpp"
#include "clan_emul/tripwire.hpp"
#include "support/child_process.hpp"

using namespace clan;
using namespace clan::test;
using namespace std::chrono_literals;

namespace {

NicConfig with_frames(uint32_t frames, Replacement policy = Replacement::kLru,
                      std::chrono::nanoseconds cost = 0ns) {
  NicConfig c;
  c.frames = frames;
  c.replacement = policy;
  c.remap_cost = cost;
  return c;
}

std::unique_ptr<Nic> open_nic(const NicConfig& c) {
  auto nic = Nic::open(c);
  INFO(error_message(nic.error()));
  REQUIRE(nic.ok());
  return std::move(nic.value());
}

// Waits, with a bound, for a condition another thread brings about.
template <class F>
bool eventually(F f, std::chrono::milliseconds limit = 10s) {
  const Deadline d = Deadline::after(limit);
  while (!f()) {
    if (d.expired()) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

TEST_CASE("endpoints beyond the frames start on the host, and a free frame is taken at once",
          "[resident]") {
  auto owner = open_nic(with_frames(2));
  std::vector<Endpoint> eps;
  for (int i = 0; i < 3; ++i) eps.push_back(std::move(owner->create_endpoint().value()));
  CHECK(eps[0].residency() == Residency::kOnNic);
  CHECK(eps[1].residency() == Residency::kOnNic);
  CHECK(eps[2].residency() == Residency::kOnHostReadOnly);
  ResidentSetStats s = owner->resident_set_stats();
  CHECK(s.frames == 2);
  CHECK(s.endpoints == 3);
  CHECK(s.resident == 2);
  CHECK(s.remaps == 0);
  eps[0].reset();
  CHECK(owner->resident_set_stats().endpoints == 2);
  CHECK(owner->resident_set_stats().resident == 1);
}

TEST_CASE("a write to a non-resident endpoint is held until it is made resident, then lands and fires",
          "[resident]") {
  auto owner = open_nic(with_frames(2));
  auto writer = open_nic({});
  auto l = loci(*owner, *writer, 3);
  REQUIRE(l[2].endpoint.residency() == Residency::kOnHostReadOnly);
  auto tw = owner->arm_tripwire(l[2].region, 64);
  REQUIRE(tw.ok());

  CHECK(l[2].ap.write_word(64, 42) == Errc::kOk);
  CHECK(word(l[2].region, 64) == 42);
  CHECK(tw->fired() == 1);
  CHECK(l[2].endpoint.residency() == Residency::kOnNic);
  const ResidentSetStats s = owner->resident_set_stats();
  CHECK(s.remaps == 1);
  CHECK(s.evictions == 1);
  CHECK(s.resident == 2);
  // Exactly one of the others gave up its frame.
  CHECK((l[0].endpoint.residency() == Residency::kOnHostReadOnly) !=
        (l[1].endpoint.residency() == Residency::kOnHostReadOnly));
  // The cookie is still good while its endpoint is on the host.
  for (Locus& x : l) CHECK(x.ap.check() == Errc::kOk);
}

TEST_CASE("LRU evicts the endpoint unused since the last sample, not the oldest loaded",
          "[resident]") {
  auto owner = open_nic(with_frames(2, Replacement::kLru));
  auto writer = open_nic({});
  auto l = loci(*owner, *writer, 3);  // 0 and 1 resident, 0 loaded first
  REQUIRE(l[0].ap.write_word(0, 1) == Errc::kOk);  // 0 is used, 1 is not
  REQUIRE(l[2].ap.write_word(0, 1) == Errc::kOk);
  CHECK(l[0].endpoint.residency() == Residency::kOnNic);
  CHECK(l[1].endpoint.residency() == Residency::kOnHostReadOnly);
  CHECK(l[2].endpoint.residency() == Residency::kOnNic);
}

TEST_CASE("no write is lost at 8:1 overcommit, under either replacement policy", "[resident]") {
  const Replacement policy = GENERATE(Replacement::kRandom, Replacement::kLru);
  INFO("replacement " << to_string(policy));
  auto owner = open_nic(with_frames(2, policy, 2us));
  auto writer = open_nic({});
  auto l = loci(*owner, *writer, 16);
  constexpr int kThreads = 4, kRounds = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Each thread owns the words at offset 8 * t of every region.
      for (uint64_t round = 1; round <= kRounds; ++round) {
        for (Locus& x : l) {
          if (x.ap.write_word(8 * t, round) != Errc::kOk) failures.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  for (Locus& x : l) {
    for (int t = 0; t < kThreads; ++t) CHECK(word(x.region, 8 * t) == kRounds);
  }
  const ResidentSetStats s = owner->resident_set_stats();
  CHECK(s.remaps >= 14);
  CHECK(s.resident == 2);
}

TEST_CASE("an owner's write through a non-resident endpoint's aperture goes on and asks for residency",
          "[resident]") {
  auto peer = open_nic({});
  auto owner = open_nic(with_frames(1));
  Region target = std::move(peer->export_region(4096).value());
  Endpoint busy = std::move(owner->create_endpoint().value());
  Endpoint idle = std::move(owner->create_endpoint().value());
  REQUIRE(idle.residency() == Residency::kOnHostReadOnly);
  Aperture ap = std::move(owner->import(target.cookie(), &idle).value());
  CHECK(owner->imports_in_use() == 0);  // the endpoint's, not the NIC's

  CHECK(ap.write_word(0, 7) == Errc::kOk);  // not held
  CHECK(word(target, 0) == 7);
  CHECK(idle.residency() != Residency::kOnHostReadOnly);  // read-write or already on the NIC
  CHECK(eventually([&] { return idle.residency() == Residency::kOnNic; }));
  CHECK(busy.residency() == Residency::kOnHostReadOnly);
  CHECK(owner->resident_set_stats().remaps == 1);
}

TEST_CASE("a held write is returned to its sender when its region goes", "[resident]") {
  // A re-mapping that never finishes keeps the writer held.
  auto owner = open_nic(with_frames(1, Replacement::kLru, 3600s));
  auto writer = open_nic({});
  auto l = loci(*owner, *writer, 2);
  REQUIRE(l[1].endpoint.residency() == Residency::kOnHostReadOnly);
  std::atomic<int> result{-1};
  std::thread held([&] { result = static_cast<int>(l[1].ap.write_word(0, 1)); });
  // The writer's request reaches the re-mapping thread, which takes a frame.
  CHECK(eventually([&] { return owner->resident_set_stats().evictions == 1; }));
  CHECK(result.load() == -1);
  l[1].region.reset();
  held.join();
  CHECK(result.load() == static_cast<int>(Errc::kStaleCookie));
}

TEST_CASE("a held write is returned with kPeerDead when the endpoint's owner dies", "[resident]") {
  test::Pipe cookies, go;
  test::ChildProcess owner_process([&] {
    auto owner = Nic::open(with_frames(1, Replacement::kLru, 3600s));
    if (!owner) return 1;
    Endpoint a = std::move((*owner)->create_endpoint().value());
    Endpoint b = std::move((*owner)->create_endpoint().value());
    Region r = std::move((*owner)->export_region(4096, &b).value());
    cookies.put(r.cookie());
    int wait_forever = 0;
    go.get(wait_forever, 60s);
    return 0;
  });
  RdmaCookie c{};
  REQUIRE(cookies.get(c));
  auto writer = open_nic({});
  Aperture ap = std::move(writer->import(c).value());
  std::atomic<int> result{-1};
  std::thread held([&] { result = static_cast<int>(ap.write_word(0, 1)); });
  // Killed and not yet reaped: a zombie still answers kill(pid, 0).
  owner_process.kill_now();
  held.join();
  CHECK(result.load() == static_cast<int>(Errc::kPeerDead));
  owner_process.wait();
}

TEST_CASE("a held write gives up at its deadline, writing nothing, and the queue stays usable",
          "[resident]") {
  auto owner = open_nic(with_frames(1, Replacement::kLru, 3600s));
  auto writer = open_nic({});
  auto l = loci(*owner, *writer, 2);
  REQUIRE(l[1].endpoint.residency() == Residency::kOnHostReadOnly);
  CHECK(l[1].ap.write_word(0, 9, Deadline::after(20ms)) == Errc::kTimeout);
  CHECK(word(l[1].region, 0) == 0);
  CHECK(l[1].ap.check() == Errc::kOk);
}

TEST_CASE("a forked child that drops its copy of the NIC leaves the parent's resident set working",
          "[resident]") {
  auto owner = open_nic(with_frames(1));
  auto writer = open_nic({});
  auto l = loci(*owner, *writer, 2);
  test::ChildProcess child([&] {
    owner.reset();  // the child's copy only
    return 0;
  });
  REQUIRE(child.wait() == 0);
  CHECK(l[1].ap.write_word(0, 5) == Errc::kOk);  // made resident by the parent's thread
  CHECK(word(l[1].region, 0) == 5);
  CHECK(owner->resident_set_stats().remaps == 1);
}

TEST_CASE("endpoint limits are checked at open and named when they run out", "[resident]") {
  NicConfig c;
  c.frames = 0;
  CHECK(Nic::open(c).error() == Errc::kInvalidArgument);
  c = NicConfig{};
  CHECK(open_nic(c)->config().max_endpoints == c.event_queue_capacity - 1);
  c.max_endpoints = c.event_queue_capacity;
  auto bad = Nic::open(c);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error() == Errc::kInvalidArgument);
  CHECK_THAT(error_message(bad.error()), Catch::Contains("endpoints"));

  c = NicConfig{};
  c.max_endpoints = 2;
  auto nic = open_nic(c);
  Endpoint a = std::move(nic->create_endpoint().value());
  Endpoint b = std::move(nic->create_endpoint().value());
  auto none = nic->create_endpoint();
  REQUIRE_FALSE(none.ok());
  CHECK(none.error() == Errc::kNoResources);
  CHECK_THAT(error_message(none.error()), Catch::Contains("no endpoint left"));
}
