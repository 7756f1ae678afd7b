// The spin-then-block wait's per-thread history (clan_emul/spin_wait.hpp): a
// thread whose waits keep being answered long after its spin budget while it
// queues for a CPU stops spinning, spins on every eighth wait to look again,
// and spins on every wait once one is answered within the budget. Late
// answers without that queueing (a peer asleep, a timeout) never stop it.
// The queueing is scripted here (the history's run-delay source); the real
// source, the scheduler's accounting, is checked on its own.
#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "clan_emul/run_delay.hpp"
#include "clan_emul/spin_wait.hpp"

using namespace std::chrono_literals;

namespace {

constexpr int64_t kBudgetNs = 100'000;

struct Outcome {
  clan::Errc result;
  int looks;  // calls of ready(): thousands when the wait spun, a handful when it slept at once
  bool spun() const { return looks > 20; }
};

// One wait on a word nobody wakes. ready() turns true at its
// `answer_at`-th call (0: never, so the wait sleeps to its deadline, long
// after the budget).
Outcome wait_once(int answer_at) {
  std::atomic<uint32_t> sleepers{0}, word{0};
  int looks = 0;
  auto ready = [&] { return ++looks == answer_at; };
  const clan::Errc e = clan::spin_then_block(ready, kBudgetNs, sleepers, word, clan::Deadline::after(20ms));
  return {e, looks};
}

// The scripted run delay: each reading is `step` ns more than the last, so
// every wait that sleeps counts as having queued for a CPU that long.
thread_local uint64_t scripted_delay = 0;
thread_local uint64_t scripted_step = 0;
uint64_t scripted_run_delay() { return scripted_delay += scripted_step; }

// Runs `body` on a new thread (the history is per thread, and starts clean)
// whose waits queue `queued_ns` for a CPU each time they sleep.
template <class Body>
void on_fresh_thread(uint64_t queued_ns, Body body) {
  std::thread t([&] {
    scripted_step = queued_ns;
    clan::spin_history.run_delay_ns = &scripted_run_delay;
    clan::spin_history.cpus_oversubscribed = [] { return false; };  // the history alone decides
    body();
  });
  t.join();
}

constexpr uint64_t kQueued = 10 * kBudgetNs;  // an oversubscribed CPU

}  // namespace

TEST_CASE("spin wait: a thread stops spinning after two waits answered late while it queued for a CPU, "
          "and probes every eighth wait",
          "[spin]") {
  on_fresh_thread(kQueued, [] {
    for (int i = 0; i < 2; ++i) {
      const Outcome late = wait_once(0);
      CHECK(late.result == clan::Errc::kTimeout);
      CHECK(late.spun());
    }
    for (int i = 0; i < 7; ++i) {
      const Outcome slept = wait_once(0);
      CHECK(slept.result == clan::Errc::kTimeout);
      CHECK_FALSE(slept.spun());
    }
    const Outcome probe = wait_once(0);  // the eighth: spins, is answered late again
    CHECK(probe.spun());
    CHECK_FALSE(wait_once(0).spun());
  });
}

TEST_CASE("spin wait: a probe answered while spinning makes the thread spin on every wait again", "[spin]") {
  on_fresh_thread(kQueued, [] {
    wait_once(0);
    wait_once(0);
    for (int i = 0; i < 7; ++i) REQUIRE_FALSE(wait_once(0).spun());
    const Outcome probe = wait_once(100);  // answered during the spin
    CHECK(probe.result == clan::Errc::kOk);
    CHECK(probe.looks == 100);
    // Spinning as at the start: two late answers again before it stops.
    CHECK(wait_once(0).spun());
    CHECK(wait_once(0).spun());
    CHECK_FALSE(wait_once(0).spun());
  });
}

TEST_CASE("spin wait: a thread answered within its budget keeps spinning", "[spin]") {
  on_fresh_thread(kQueued, [] {
    for (int i = 0; i < 20; ++i) {
      const Outcome quick = wait_once(50);
      REQUIRE(quick.result == clan::Errc::kOk);
      REQUIRE(quick.looks == 50);  // answered while spinning, never slept
    }
    // One late answer is not enough to give up spinning.
    CHECK(wait_once(0).spun());
    CHECK(wait_once(50).result == clan::Errc::kOk);
    CHECK(wait_once(0).spun());
  });
}

TEST_CASE("spin wait: a zero budget never spins", "[spin]") {
  on_fresh_thread(kQueued, [] {
    std::atomic<uint32_t> sleepers{0}, word{0};
    int looks = 0;
    auto ready = [&] {
      ++looks;
      return false;
    };
    CHECK(clan::spin_then_block(ready, 0, sleepers, word, clan::Deadline::after(1ms)) == clan::Errc::kTimeout);
    CHECK(looks < 20);
  });
}

TEST_CASE("spin wait: late answers without queueing for a CPU never stop the spinning", "[spin]") {
  // A peer that was asleep, or a timeout after a lost datagram: the CPU was
  // free, and the spin took nothing from anybody.
  on_fresh_thread(0, [] {
    for (int i = 0; i < 12; ++i) REQUIRE(wait_once(0).spun());
  });
  // Queueing for less than the budget is not oversubscription either.
  on_fresh_thread(kBudgetNs / 2, [] {
    for (int i = 0; i < 12; ++i) REQUIRE(wait_once(0).spun());
  });
}

TEST_CASE("spin wait: a late answer without queueing clears the misses", "[spin]") {
  on_fresh_thread(kQueued, [] {
    wait_once(0);  // one miss
    scripted_step = 0;
    CHECK(wait_once(0).spun());  // late, but the CPU was free: misses cleared
    scripted_step = kQueued;
    CHECK(wait_once(0).spun());  // one miss again, not two
    CHECK(wait_once(0).spun());  // the second: still spun, now sleeping at once
    CHECK_FALSE(wait_once(0).spun());
  });
}

TEST_CASE("run delay: the scheduler's accounting grows while two threads share one CPU", "[spin]") {
  // Both threads pinned to the CPU this one runs on, both busy: each queues
  // behind the other, which the reading must show.
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  std::atomic<bool> stop{false};
  std::atomic<int> pinned{0};
  auto busy = [&] {
    if (sched_setaffinity(0, sizeof one, &one) == 0) ++pinned;
    while (!stop.load()) clan::cpu_relax();
  };
  std::thread other(busy);
  uint64_t before = 0, after = 0;
  std::thread measured([&] {
    const bool ok = sched_setaffinity(0, sizeof one, &one) == 0;
    if (ok) ++pinned;
    before = clan::thread_run_delay_ns();
    // Busy until the reading moves, bounded by a deadline (not a sleep).
    const auto until = std::chrono::steady_clock::now() + 10s;
    while ((after = clan::thread_run_delay_ns()) == before && std::chrono::steady_clock::now() < until) {
    }
    stop = true;
  });
  measured.join();
  other.join();
  REQUIRE(pinned == 2);
  CHECK(after > before);
}
