// Tripwires: fire on overlapping network writes (PIO and DMA), wake blocked
// waiters, post to event queues, and cost no system call when nobody sleeps.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "tests/clan_emul/nic_pair.hpp"
#include "clan_emul/aperture.hpp"
#include "clan_emul/dma_stream.hpp"
#include "clan_emul/event_queue.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/region.hpp"
#include "clan_emul/tripwire.hpp"
#include "support/child_process.hpp"

using namespace clan;
using namespace std::chrono_literals;

using Pair = test::NicPair;

TEST_CASE("a tripwire fires on writes that overlap its word and on no others", "[tripwire]") {
  Pair p;
  auto tw = p.owner->arm_tripwire(p.region, 64);
  REQUIRE(tw.ok());
  CHECK(tw->fired() == 0);
  p.ap.write_word(56, 1);  // ends just before
  p.ap.write_word(72, 1);  // starts just after
  CHECK(tw->fired() == 0);
  p.ap.write_word(64, 1);
  CHECK(tw->fired() == 1);
  char buf[3] = {1, 2, 3};
  p.ap.write(70, buf, 3);  // overlaps the last byte
  CHECK(tw->fired() == 2);
  p.ap.write(0, buf, 3);
  CHECK(tw->fired() == 2);
  // Local writes by the owner are not network writes.
  p.region.data()[64] = std::byte{5};
  CHECK(tw->fired() == 2);
}

TEST_CASE("a tripwire fires on DMA writes", "[tripwire][dma]") {
  Pair p;
  auto tw = p.owner->arm_tripwire(p.region, 128);
  REQUIRE(tw.ok());
  DmaStream dma(*p.writer);
  auto t = dma.write_word(p.ap, 128, 42);
  REQUIRE(t.ok());
  REQUIRE(dma.wait(t.value(), Deadline::after(10s)) == Errc::kOk);
  CHECK(tw->fired() == 1);
  CHECK(p.word(128) == 42);
}

TEST_CASE("a disarmed tripwire no longer fires and its CAM entry is reusable", "[tripwire]") {
  Pair p;
  auto a = p.owner->arm_tripwire(p.region, 0);
  auto b = p.owner->arm_tripwire(p.region, 8);
  auto c = p.owner->arm_tripwire(p.region, 16);
  REQUIRE((a.ok() && b.ok() && c.ok()));
  b->reset();  // unlink the middle of the region's list
  p.ap.write(0, "0123456789abcdefghij", 20);
  CHECK(a->fired() == 1);
  CHECK(c->fired() == 1);
  CHECK(p.owner->tripwires_in_use() == 2);
}

TEST_CASE("spin-then-block: a waiter that went to sleep is woken by a write", "[tripwire]") {
  NicConfig c;
  c.spin_budget = 0ns;  // go straight to the blocking path
  Pair p(c);
  auto tw = p.owner->arm_tripwire(p.region, 0);
  REQUIRE(tw.ok());
  std::atomic<int> result{-1};
  std::thread waiter([&] {
    Errc e = tw->wait([&] { return p.word(0) == 77; }, Deadline::after(20s));
    result = static_cast<int>(e);
  });
  // Write only once the waiter has announced that it sleeps.
  auto limit = Deadline::after(10s);
  while (tw->sleepers() == 0 && !limit.expired()) std::this_thread::yield();
  REQUIRE(tw->sleepers() == 1);
  const uint64_t wakes = futex_wake_calls();
  REQUIRE(p.ap.write_word(0, 77) == Errc::kOk);
  waiter.join();
  CHECK(result == static_cast<int>(Errc::kOk));
  CHECK(futex_wake_calls() == wakes + 1);
}

TEST_CASE("writes make no wake-up system call when nobody sleeps", "[tripwire]") {
  Pair p;
  auto tw = p.owner->arm_tripwire(p.region, 0);
  auto q = p.owner->create_event_queue();
  auto tq = p.owner->arm_tripwire(p.region, 8, &q.value(), 5);
  REQUIRE((tw.ok() && tq.ok()));
  const uint64_t wakes = futex_wake_calls();
  for (uint64_t i = 0; i < 10000; ++i) {
    const uint64_t words[2] = {i, i};  // covers both tripwires
    p.ap.write(0, words, sizeof words);
  }
  CHECK(futex_wake_calls() == wakes);
  CHECK(tw->fired() == 10000);
}

TEST_CASE("waiting on a tripwire times out when nothing is written", "[tripwire]") {
  Pair p;
  auto tw = p.owner->arm_tripwire(p.region, 0);
  auto start = Clock::now();
  CHECK(tw->wait([] { return false; }, Deadline::after(30ms)) == Errc::kTimeout);
  CHECK(Clock::now() - start >= 30ms);
}

TEST_CASE("poke wakes a blocked waiter so it can re-check", "[tripwire]") {
  NicConfig c;
  c.spin_budget = 0ns;
  Pair p(c);
  auto tw = p.owner->arm_tripwire(p.region, 0);
  std::atomic<bool> stop{false};
  std::thread waiter([&] { tw->wait([&] { return stop.load(); }, Deadline::after(20s)); });
  auto limit = Deadline::after(10s);
  while (tw->sleepers() == 0 && !limit.expired()) std::this_thread::yield();
  stop = true;
  tw->poke();
  waiter.join();
  CHECK(tw->sleepers() == 0);
}

TEST_CASE("a writer in another process wakes a waiter blocked on a tripwire",
          "[tripwire][multiprocess]") {
  NicConfig c;
  c.spin_budget = 0ns;
  auto owner = std::move(Nic::open(c).value());
  auto region = std::move(owner->export_region(4096).value());
  auto tw = std::move(owner->arm_tripwire(region, 0).value());
  test::Pipe go;
  RdmaCookie cookie = region.cookie();
  test::ChildProcess child([&] {
    auto nic = Nic::open({});
    auto ap = (*nic)->import(cookie);
    if (!ap) return 1;
    char token;
    if (!go.get(token)) return 2;
    for (uint64_t i = 1; i <= 1000; ++i) ap->write_word(0, i);
    return 0;
  });
  // Tell the child to start only when we are asleep on the tripwire.
  std::thread kick([&] {
    auto limit = Deadline::after(10s);
    while (tw.sleepers() == 0 && !limit.expired()) std::this_thread::yield();
    go.put('g');
  });
  auto word = [&] {
    return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(region.data())).load();
  };
  CHECK(tw.wait([&] { return word() == 1000; }, Deadline::after(20s)) == Errc::kOk);
  kick.join();
  CHECK(child.wait() == 0);
  CHECK(tw.fired() == 1000);
}
