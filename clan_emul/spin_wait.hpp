// Spin-then-block: the one waiting policy of the fabric. Spin (no system
// call) for a bounded budget while the answer is likely to come from another
// core within a cache-line round trip; then announce the sleep, re-check and
// sleep on a futex word. A producer changes the state, bumps the word, and
// makes the wake-up system call only if it sees a sleeper announced. Both
// sides use seq_cst, so either the producer sees the sleeper or the sleeper
// sees the new state.
//
// Spinning pays only while the producer is running on another CPU. When
// more threads wait than there are CPUs, the producer is usually queued
// behind the spinners, every spin runs out, and the spinning takes the CPU
// the producers need. So each thread remembers how its recent waits ended:
// after two in a row whose spin ran out, whose sleep then lasted more than
// twice the budget, and during which the thread itself queued for a CPU for
// longer than the budget (the scheduler's run delay: the CPUs are
// oversubscribed), it sleeps at once, spinning only on every eighth wait,
// until a wait is answered within the budget again (a near miss counts as
// answered: a longer spin would have caught it).
//
// A late answer without that queueing counts as answered: the producer was
// asleep or busy, or the wait timed out (after a lost datagram, say), and
// spinning took nothing from anybody. Counted as misses, such answers can
// put two threads pinging each other on an idle host into sleeping at once
// on both sides, where each one's probe finds the other asleep and runs out
// too, and every exchange pays two wake-ups.
#pragma once

#include <atomic>
#include <cstdint>

#include "clan_emul/deadline.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/futex.hpp"
#include "clan_emul/run_delay.hpp"

namespace clan {

// How this thread's recent waits ended (see the header comment).
struct SpinHistory {
  uint32_t misses = 0;  // consecutive waits answered long after the budget
  uint32_t waits = 0;   // waits since spinning was last given up on (for probes)
  // This thread's run delay (see run_delay.hpp); tests substitute a script.
  uint64_t (*run_delay_ns)() = &thread_run_delay_ns;
  static constexpr uint32_t kMissesBeforeSleeping = 2;
  static constexpr uint32_t kProbeEvery = 8;
  bool should_spin() { return misses < kMissesBeforeSleeping || ++waits % kProbeEvery == 0; }
  // This thread's recent waits found the CPUs oversubscribed: it sleeps at once.
  bool oversubscribed() const { return misses >= kMissesBeforeSleeping; }
  void answered_in_time() { misses = waits = 0; }
  void answered_late() {
    if (misses < kMissesBeforeSleeping) ++misses;
  }
};
inline thread_local SpinHistory spin_history;

// How a waiter blocks once announced: the fabric's waits sleep on a futex
// word, which a producer bumps before its wake-up call. `watch` reads the
// word before the last look at the state, so a wake-up after that look is
// not missed; `block` returns false on timeout.
struct FutexSleep {
  std::atomic<uint32_t>& word;
  uint32_t seen = 0;
  void watch() { seen = word.load(std::memory_order_seq_cst); }
  bool block(Deadline deadline) { return futex_wait(&word, seen, deadline); }
};

// spin_then_block with another way to block (a `Sleep` like FutexSleep).
template <class Ready, class Sleep>
Errc spin_then_sleep(Ready&& ready, int64_t spin_ns, std::atomic<uint32_t>& sleepers,
                     Sleep& sleep, Deadline deadline) {
  if (ready()) return Errc::kOk;
  if (deadline.expired()) return Errc::kTimeout;  // a poll: no spinning
  const uint64_t budget = static_cast<uint64_t>(spin_ns > 0 ? spin_ns : 0);
  SpinHistory& history = spin_history;
  const bool spin = budget > 0 && history.should_spin();
  if (spin) {
    const uint64_t spin_until = now_ns() + budget;
    for (uint32_t n = 1;; ++n) {
      cpu_relax();
      if (ready()) {
        history.answered_in_time();
        return Errc::kOk;
      }
      if ((n & 63) == 0 && (now_ns() >= spin_until || deadline.expired())) break;
    }
  }
  // Read only once the spin ran out: the sleep costs system calls anyway.
  const uint64_t slept_at = spin ? now_ns() : 0;
  const uint64_t queued_before = spin ? history.run_delay_ns() : 0;
  // Called once a wait that spun is answered (or timed out) after sleeping.
  auto judge = [&] {
    if (!spin) return;
    const uint64_t queued_after = now_ns() - slept_at > 2 * budget ? history.run_delay_ns() : 0;
    if (queued_after > queued_before && queued_after - queued_before > budget) {
      history.answered_late();
    } else {
      history.answered_in_time();
    }
  };
  for (;;) {
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    sleep.watch();
    if (ready()) {
      sleepers.fetch_sub(1, std::memory_order_seq_cst);
      judge();
      return Errc::kOk;
    }
    const bool woke = sleep.block(deadline);
    sleepers.fetch_sub(1, std::memory_order_seq_cst);
    if (ready()) {
      judge();
      return Errc::kOk;
    }
    if (!woke || deadline.expired()) {
      judge();
      return Errc::kTimeout;
    }
  }
}

template <class Ready>
Errc spin_then_block(Ready&& ready, int64_t spin_ns, std::atomic<uint32_t>& sleepers,
                     std::atomic<uint32_t>& word, Deadline deadline) {
  FutexSleep sleep{word};
  return spin_then_sleep(ready, spin_ns, sleepers, sleep, deadline);
}

// The producer side: call after publishing the new state.
inline void wake_sleepers(std::atomic<uint32_t>& sleepers, std::atomic<uint32_t>& word) {
  if (sleepers.load(std::memory_order_seq_cst) != 0) {
    word.fetch_add(1, std::memory_order_seq_cst);
    futex_wake_all(&word);
  }
}

}  // namespace clan
