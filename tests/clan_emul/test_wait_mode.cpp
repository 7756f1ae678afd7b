// Wait modes (clan_emul/wait_mode.hpp, paper 004 sect. 3.3): poll never
// sleeps, block never spins, adaptive spins only while the thread that will
// answer runs on another CPU. The producer's state is scripted here (the
// history's producer-state source), the runner table itself checked on its
// own, and the modes reach tripwires and event queues from the NIC's
// configuration and from CLAN_WAIT_MODE.
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "tests/clan_emul/nic_pair.hpp"
#include "clan_emul/aperture.hpp"
#include "clan_emul/cpu_load.hpp"
#include "clan_emul/cpu_move.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/event_queue.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/region.hpp"
#include "clan_emul/runner.hpp"
#include "clan_emul/spin_wait.hpp"
#include "clan_emul/tripwire.hpp"

using namespace clan;
using namespace std::chrono_literals;

namespace {

constexpr int64_t kLongBudgetNs = 10'000'000'000;  // a spin that never runs out by itself here

// One wait on a word nobody wakes, in `mode`: ready() turns true at its
// `answer_at`-th call (0: never). Records whether a sleep was ever announced.
struct Outcome {
  Errc result;
  int looks;
  bool announced;
  bool spun() const { return looks > 20; }
};
Outcome wait_once(WaitMode mode, int answer_at, Deadline deadline, int64_t budget = kLongBudgetNs,
                  const std::atomic<uint32_t>* producer = nullptr) {
  std::atomic<uint32_t> sleepers{0}, word{0};
  int looks = 0;
  bool announced = false;
  auto ready = [&] {
    announced = announced || sleepers.load() != 0;
    return ++looks == answer_at;
  };
  const Errc e = wait_on_word(ready, WaitPolicy{mode, budget, producer}, sleepers, word, deadline);
  return {e, looks, announced};
}

// The scripted producer: what the history's source answers, and the tids it
// was asked about.
thread_local ProducerState scripted_state = ProducerState::kUnknown;
thread_local int scripted_calls = 0;
thread_local int switch_after = -1;  // answer kRunningHere from this call on (-1: never)
thread_local uint32_t asked_tid = 0;
ProducerState scripted_producer(uint32_t tid) {
  asked_tid = tid;
  if (switch_after >= 0 && ++scripted_calls > switch_after) return ProducerState::kRunningHere;
  return scripted_state;
}

// Whether every CPU is taken, as the scripted history reads it.
thread_local bool scripted_oversubscribed = false;
thread_local int load_readings = 0;
bool scripted_load() {
  ++load_readings;
  return scripted_oversubscribed;
}
thread_local int moves = 0;
bool scripted_move() {  // the table then finds the producer on another CPU
  ++moves;
  scripted_state = ProducerState::kRunningElsewhere;
  return true;
}

// Runs `body` on a new thread (the history is per thread) whose producer
// reads `state`, on a host with CPUs to spare unless the body says otherwise.
// A REQUIRE that fails on the thread is rethrown on the test's own.
template <class Body>
void with_producer(ProducerState state, Body body) {
  std::exception_ptr failed;
  std::thread t([&] {
    scripted_state = state;
    spin_history.producer_state = &scripted_producer;
    spin_history.cpus_oversubscribed = &scripted_load;
    spin_history.move_off_cpu = &scripted_move;
    try {
      body();
    } catch (...) {
      failed = std::current_exception();
    }
  });
  t.join();
  if (failed) std::rethrow_exception(failed);
}

// Pins the calling thread to the CPU it runs on, so that what it reads of
// its own CPU cannot change under it.
void pin_here() {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(static_cast<unsigned>(::sched_getcpu()), &one);
  ::sched_setaffinity(0, sizeof one, &one);
}

class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    ::setenv(name, value, 1);
  }
  ~EnvVar() {
    if (had_) ::setenv(name_, old_.c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

}  // namespace

TEST_CASE("wait modes: names and parsing", "[wait_mode]") {
  for (WaitMode m : {WaitMode::kPoll, WaitMode::kBlock, WaitMode::kAdaptive}) {
    CHECK(parse_wait_mode(wait_mode_name(m)) == m);
  }
  for (const char* bad : {"", "Poll", "spin", "poll ", "adaptive,", "blocking"}) {
    INFO(bad);
    CHECK_FALSE(parse_wait_mode(bad).has_value());
  }
}

TEST_CASE("wait modes: poll spins until ready and never announces a sleep", "[wait_mode]") {
  const Outcome o = wait_once(WaitMode::kPoll, 200'000, Deadline::after(20s), 0);
  CHECK(o.result == Errc::kOk);
  CHECK(o.looks == 200'000);  // far beyond any budget's worth of looks: the budget does not apply
  CHECK_FALSE(o.announced);
  const Outcome t = wait_once(WaitMode::kPoll, 0, Deadline::after(5ms));
  CHECK(t.result == Errc::kTimeout);
  CHECK(t.spun());
  CHECK_FALSE(t.announced);
}

TEST_CASE("wait modes: block announces the sleep at once, whatever the budget", "[wait_mode]") {
  const Outcome o = wait_once(WaitMode::kBlock, 0, Deadline::after(5ms));
  CHECK(o.result == Errc::kTimeout);
  CHECK_FALSE(o.spun());
  CHECK(o.announced);
}

TEST_CASE("wait modes: block sleeps until a producer wakes it", "[wait_mode]") {
  std::atomic<uint32_t> sleepers{0}, word{0};
  std::atomic<bool> state{false};
  std::atomic<int> looks{0};
  std::atomic<int> result{-1};
  std::thread waiter([&] {
    auto ready = [&] {
      ++looks;
      return state.load();
    };
    result = static_cast<int>(
        wait_on_word(ready, WaitPolicy{WaitMode::kBlock, kLongBudgetNs, nullptr}, sleepers, word, Deadline::after(20s)));
  });
  const Deadline limit = Deadline::after(10s);
  while (sleepers.load() == 0 && !limit.expired()) std::this_thread::yield();
  REQUIRE(sleepers.load() == 1);
  state = true;
  wake_sleepers(sleepers, word);
  waiter.join();
  CHECK(result == static_cast<int>(Errc::kOk));
  CHECK(looks < 20);
}

TEST_CASE("adaptive wait: spins while the producer runs on another CPU", "[wait_mode]") {
  const std::atomic<uint32_t> producer{4242};
  with_producer(ProducerState::kRunningElsewhere, [&] {
    const Outcome o = wait_once(WaitMode::kAdaptive, 5000, Deadline::after(20s), kLongBudgetNs, &producer);
    CHECK(o.result == Errc::kOk);
    CHECK(o.looks == 5000);
    CHECK_FALSE(o.announced);
    CHECK(asked_tid == 4242);
    CHECK(load_readings == 0);  // answered within the grace: no reading
  });
}

TEST_CASE("adaptive wait: sleeps at once when the producer is marked on the waiter's CPU", "[wait_mode]") {
  const std::atomic<uint32_t> producer{4242};
  with_producer(ProducerState::kRunningHere, [&] {
    const Outcome o = wait_once(WaitMode::kAdaptive, 0, Deadline::after(5ms), kLongBudgetNs, &producer);
    CHECK(o.result == Errc::kTimeout);
    CHECK_FALSE(o.spun());
    CHECK(o.announced);
  });
}

TEST_CASE("adaptive wait: every eighth wait with the producer on this CPU moves away and spins, if a CPU is free",
          "[wait_mode]") {
  const std::atomic<uint32_t> producer{4242};
  with_producer(ProducerState::kRunningHere, [&] {
    for (int i = 1; i <= 16; ++i) {
      scripted_state = ProducerState::kRunningHere;
      if (i % 8 == 0) {  // moves, then spins until the answer
        const Outcome o = wait_once(WaitMode::kAdaptive, 2000, Deadline::after(5s), kLongBudgetNs, &producer);
        CHECK(o.result == Errc::kOk);
        CHECK_FALSE(o.announced);
      } else {  // sleeps at once
        const Outcome o = wait_once(WaitMode::kAdaptive, 0, Deadline::after(1ms), kLongBudgetNs, &producer);
        CHECK(o.announced);
        CHECK_FALSE(o.spun());
      }
      CHECK(moves == i / 8);
    }
    scripted_state = ProducerState::kRunningHere;
    scripted_oversubscribed = true;  // no CPU free: never moves
    for (int i = 0; i < 16; ++i) wait_once(WaitMode::kAdaptive, 0, Deadline::after(1ms), kLongBudgetNs, &producer);
    CHECK(moves == 2);
  });
}

TEST_CASE("a thread moved off its CPU runs on another, with its own affinity mask", "[wait_mode]") {
  std::exception_ptr failed;
  std::thread t([&] {
    try {
      cpu_set_t own;
      REQUIRE(::sched_getaffinity(0, sizeof own, &own) == 0);
      INFO("this test needs a thread allowed on two CPUs at least (CPU_COUNT of its mask: " << CPU_COUNT(&own)
                                                                                            << ")");
      REQUIRE(CPU_COUNT(&own) >= 2);
      const int before = ::sched_getcpu();
      CHECK(move_off_this_cpu());
      CHECK(::sched_getcpu() != before);
      cpu_set_t after;
      REQUIRE(::sched_getaffinity(0, sizeof after, &after) == 0);
      CHECK(CPU_EQUAL(&own, &after));
    } catch (...) {
      failed = std::current_exception();
    }
  });
  t.join();
  if (failed) std::rethrow_exception(failed);
}

TEST_CASE("adaptive wait: sleeps at once when the producer is asleep and nobody woke it", "[wait_mode]") {
  const std::atomic<uint32_t> producer{4242};
  with_producer(ProducerState::kAsleep, [&] {
    const Outcome o = wait_once(WaitMode::kAdaptive, 0, Deadline::after(5ms), kLongBudgetNs, &producer);
    CHECK_FALSE(o.spun());
    CHECK(o.announced);
  });
}

TEST_CASE("adaptive wait: spins for a producer asleep that this thread just woke", "[wait_mode]") {
  const std::atomic<uint32_t> producer{4242};
  with_producer(ProducerState::kAsleep, [&] {
    std::atomic<uint32_t> other{0};
    futex_wake_all(&other);  // this thread wakes somebody (nobody sleeps there: no matter)
    const Outcome o = wait_once(WaitMode::kAdaptive, 5000, Deadline::after(20s), kLongBudgetNs, &producer);
    CHECK(o.result == Errc::kOk);
    CHECK(o.looks == 5000);
    // The wait consumed the wake: the next one sleeps at once.
    CHECK_FALSE(wait_once(WaitMode::kAdaptive, 0, Deadline::after(5ms), kLongBudgetNs, &producer).spun());
  });
}

TEST_CASE("adaptive wait: a producer it woke that runs nowhere after an eighth of the budget ends the spin",
          "[wait_mode]") {
  const std::atomic<uint32_t> producer{4242};
  with_producer(ProducerState::kAsleep, [&] {
    std::atomic<uint32_t> other{0};
    futex_wake_all(&other);
    constexpr int64_t kBudget = 800'000'000;  // 800 ms: an eighth of it is the grace
    std::atomic<uint32_t> sleepers{0}, word{0};
    const uint64_t start = now_ns();
    uint64_t announced_at = 0;
    auto ready = [&] {
      if (announced_at == 0 && sleepers.load() != 0) announced_at = now_ns();
      return false;
    };
    const Errc e = wait_on_word(ready, WaitPolicy{WaitMode::kAdaptive, kBudget, &producer}, sleepers, word,
                                Deadline::after(900ms));
    CHECK(e == Errc::kTimeout);
    REQUIRE(announced_at != 0);
    CHECK(announced_at - start >= static_cast<uint64_t>(kBudget / kWokenGraceDivisor));
    CHECK(announced_at - start < static_cast<uint64_t>(kBudget / 2));
  });
}

TEST_CASE("adaptive wait: a producer that lands on the waiter's CPU ends the spin", "[wait_mode]") {
  const std::atomic<uint32_t> producer{4242};
  with_producer(ProducerState::kRunningElsewhere, [&] {
    switch_after = 3;  // the fourth look at the producer finds it on this CPU
    const Outcome o = wait_once(WaitMode::kAdaptive, 0, Deadline::after(50ms), kLongBudgetNs, &producer);
    // Without the switch it would spin to the deadline, millions of looks;
    // the producer's looks come every 64 spins.
    CHECK(o.result == Errc::kTimeout);
    CHECK(o.announced);
    CHECK(o.looks < 64 * 8);
  });
}

// Waits on a word nobody wakes with `budget`; returns when the sleep was
// announced, in ns after the wait began (0: never).
uint64_t announced_after(int64_t budget, const std::atomic<uint32_t>* producer, Deadline deadline) {
  std::atomic<uint32_t> sleepers{0}, word{0};
  const uint64_t start = now_ns();
  uint64_t announced_at = 0;
  // Answered as soon as the sleep is announced: the test need not sleep on.
  auto ready = [&] {
    if (announced_at == 0 && sleepers.load() != 0) announced_at = now_ns();
    return announced_at != 0;
  };
  wait_on_word(ready, WaitPolicy{WaitMode::kAdaptive, budget, producer}, sleepers, word, deadline);
  return announced_at == 0 ? 0 : announced_at - start;
}

TEST_CASE("adaptive wait: a spin unanswered for an eighth of the budget ends when every CPU is taken",
          "[wait_mode]") {
  const std::atomic<uint32_t> producer{4242};
  constexpr int64_t kBudget = 800'000'000;
  with_producer(ProducerState::kRunningElsewhere, [&] {
    scripted_oversubscribed = true;
    const uint64_t at = announced_after(kBudget, &producer, Deadline::after(900ms));
    REQUIRE(at != 0);
    CHECK(at >= woken_grace_ns(kBudget));
    CHECK(at < static_cast<uint64_t>(kBudget / 2));
  });
  with_producer(ProducerState::kUnknown, [&] {  // no producer known: the same
    scripted_oversubscribed = true;
    const uint64_t at = announced_after(kBudget, nullptr, Deadline::after(900ms));
    REQUIRE(at != 0);
    CHECK(at < static_cast<uint64_t>(kBudget / 2));
  });
}

TEST_CASE("adaptive wait: every eighth spin the load rule would end runs on, a probe", "[wait_mode]") {
  const std::atomic<uint32_t> producer{4242};
  constexpr int64_t kBudget = 40'000'000;  // the grace is 5 ms
  with_producer(ProducerState::kRunningElsewhere, [&] {
    scripted_oversubscribed = true;
    for (int i = 1; i <= 16; ++i) {
      const uint64_t at = announced_after(kBudget, &producer, Deadline::after(1s));
      REQUIRE(at != 0);
      if (i % 8 == 0) {
        CHECK(at >= static_cast<uint64_t>(kBudget));
      } else {
        CHECK(at < static_cast<uint64_t>(kBudget / 2));
      }
    }
    CHECK(load_readings == 16);
  });
}

TEST_CASE("adaptive wait: with a CPU to spare, the spin runs its whole budget", "[wait_mode]") {
  const std::atomic<uint32_t> producer{4242};
  constexpr int64_t kBudget = 200'000'000;
  with_producer(ProducerState::kRunningElsewhere, [&] {
    const uint64_t at = announced_after(kBudget, &producer, Deadline::after(2s));
    REQUIRE(at != 0);
    CHECK(at >= static_cast<uint64_t>(kBudget));
    CHECK(load_readings == 1);  // once per spin, however long
  });
}

TEST_CASE("adaptive wait: the woken producer's grace is an eighth of the budget, within a floor and the budget",
          "[wait_mode]") {
  CHECK(woken_grace_ns(800'000'000) == 100'000'000);
  CHECK(woken_grace_ns(50'000) == 6'250);
  CHECK(woken_grace_ns(20'000) == kWokenGraceFloorNs);  // an eighth would be 2.5 us
  CHECK(woken_grace_ns(3'000) == 3'000);                // never past the budget
  CHECK(woken_grace_ns(0) == 0);
}

TEST_CASE("every CPU taken: more threads runnable than CPUs, from /proc/loadavg", "[wait_mode]") {
  CHECK(oversubscribed_from("0.42 0.31 0.20 3/412 12345\n", 2));
  CHECK_FALSE(oversubscribed_from("0.42 0.31 0.20 2/412 12345\n", 2));
  CHECK_FALSE(oversubscribed_from("0.42 0.31 0.20 1/412 12345\n", 2));
  CHECK(oversubscribed_from("9.00 8.00 7.00 17/900 1\n", 16));
  // Text it cannot read says nothing.
  CHECK_FALSE(oversubscribed_from("", 2));
  CHECK_FALSE(oversubscribed_from("0.42 0.31 0.20", 2));
  CHECK_FALSE(oversubscribed_from("0.42 0.31 0.20 x/412 1\n", 2));
  CHECK_FALSE(oversubscribed_from("0.42 0.31 0.20 3 1\n", 2));
  CHECK_FALSE(oversubscribed_from("0.42 0.31 0.20 3/412 1\n", 0));
}

TEST_CASE("runner table: a thread's entry says whether it runs, and where", "[wait_mode][runner]") {
  runner_table_open();
  with_producer(ProducerState::kUnknown, [] {
    pin_here();
    const uint32_t me = runner_tid();
    REQUIRE(me != 0);
    runner_running();
    const ProducerState running = runner_state(me);
    INFO("the table lives in /dev/shm (POSIX shared memory): unknown means it could not be made");
    REQUIRE(running != ProducerState::kUnknown);
    CHECK(running == ProducerState::kRunningHere);  // read from its own CPU
    runner_asleep();
    CHECK(runner_state(me) == ProducerState::kAsleep);
    runner_running();
    CHECK(runner_state(me) == ProducerState::kRunningHere);
    CHECK(runner_state(0) == ProducerState::kUnknown);
    CHECK(runner_state(me + (1u << 16)) == ProducerState::kUnknown);  // its slot, another thread's id
  });
}

using Pair = test::NicPair;

TEST_CASE("a NIC's wait mode reaches its tripwires and event queues, and each may be set apart", "[wait_mode][nic]") {
  EnvVar unset("CLAN_WAIT_MODE", "");  // empty is unset
  NicConfig c;
  c.name = "wait-mode";
  c.wait_mode = WaitMode::kBlock;
  Pair p(c);
  CHECK(p.owner->wait_mode() == WaitMode::kBlock);
  auto tw = p.owner->arm_tripwire(p.region, 0);
  REQUIRE(tw.ok());
  CHECK(tw->wait_mode() == WaitMode::kBlock);
  auto q = p.owner->create_event_queue();
  REQUIRE(q.ok());
  CHECK(q->wait_mode() == WaitMode::kBlock);
  tw->set_wait_mode(WaitMode::kPoll);
  q->set_wait_mode(WaitMode::kAdaptive);
  CHECK(tw->wait_mode() == WaitMode::kPoll);
  CHECK(q->wait_mode() == WaitMode::kAdaptive);
  // A polling tripwire times out without ever announcing a sleep.
  bool announced = false;
  CHECK(tw->wait([&] { return announced = announced || tw->sleepers() != 0, false; }, Deadline::after(5ms)) ==
        Errc::kTimeout);
  CHECK_FALSE(announced);
}

TEST_CASE("a write leaves the writer's thread id for the tripwire's adaptive waiters", "[wait_mode][nic]") {
  Pair p;
  auto tw = p.owner->arm_tripwire(p.region, 0);
  REQUIRE(tw.ok());
  with_producer(ProducerState::kRunningHere, [&] {
    asked_tid = 0;
    REQUIRE(p.ap.write_word(0, 1) == Errc::kOk);
    CHECK(tw->wait([] { return false; }, Deadline::after(5ms)) == Errc::kTimeout);
    CHECK(asked_tid == runner_tid());
  });
}

TEST_CASE("CLAN_WAIT_MODE sets every NIC's wait mode, and a bad value fails Nic::open naming it", "[wait_mode][nic]") {
  {
    EnvVar env("CLAN_WAIT_MODE", "poll");
    NicConfig c;
    c.name = "wait-env";
    c.wait_mode = WaitMode::kBlock;
    auto nic = Nic::open(c);
    REQUIRE(nic.ok());
    CHECK(nic.value()->wait_mode() == WaitMode::kPoll);
  }
  for (const char* bad : {"spin", "POLL", "poll,block", " adaptive"}) {
    INFO("CLAN_WAIT_MODE=" << bad);
    EnvVar env("CLAN_WAIT_MODE", bad);
    NicConfig c;
    c.name = "wait-env";
    auto nic = Nic::open(c);
    REQUIRE_FALSE(nic.ok());
    CHECK(nic.error() == Errc::kInvalidArgument);
    const std::string why = error_message(nic.error());
    CHECK(why.find(std::string("CLAN_WAIT_MODE='") + bad + "'") != std::string::npos);
    CHECK(why.find(kWaitModeWords) != std::string::npos);
  }
  EnvVar empty("CLAN_WAIT_MODE", "");  // empty is unset
  NicConfig c;
  c.name = "wait-env";
  CHECK(Nic::open(c).ok());
}
