// The spin-then-block wait's per-thread history (clan_emul/spin_wait.hpp): a
// thread whose waits keep being answered long after its spin budget stops
// spinning, spins on every eighth wait to look again, and spins on every
// wait once one is answered within the budget.
#include <atomic>
#include <chrono>
#include <thread>

#include <catch2/catch.hpp>

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

// Runs `body` on a new thread: the history is per thread, and starts clean.
template <class Body>
void on_fresh_thread(Body body) {
  std::thread t(body);
  t.join();
}

}  // namespace

TEST_CASE("spin wait: a thread stops spinning after two waits answered late, and probes every eighth wait",
          "[spin]") {
  on_fresh_thread([] {
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
  on_fresh_thread([] {
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
  on_fresh_thread([] {
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
  on_fresh_thread([] {
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
