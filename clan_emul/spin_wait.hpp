// The fabric's waits (paper 004 sect. 3.3): each follows a WaitMode
// (wait_mode.hpp). poll spins until the state is ready or the deadline;
// block announces the sleep at once; adaptive spins for a bounded budget
// while the answer is likely to come from another core within a cache-line
// round trip, then announces the sleep, re-checks and sleeps on a futex
// word. A producer changes the state, bumps the word, and makes the wake-up
// system call only if it sees a sleeper announced. Both sides use seq_cst,
// so either the producer sees the sleeper or the sleeper sees the new state.
//
// Spinning pays only while the producer is running on another CPU. The
// adaptive wait reads where the thread that will answer runs (runner.hpp:
// the producer leaves its thread id beside the tripwire or event queue, and
// publishes its CPU, or that it sleeps, in the host's runner table). It
// spins only while that thread is marked running on a CPU other than the
// waiter's, or while it is asleep just after this thread woke somebody (it
// is on its way: the waiter yields once, in case the kernel queued it on
// this CPU); otherwise it sleeps at once. The waiter looks again every few
// dozen spins, so a producer that goes to sleep or lands on the waiter's CPU
// ends the spin early.
//
// Whoever the producer is, a spin that has gone on for its grace
// (woken_grace_ns: an eighth of the budget, within bounds) unanswered asks
// the kernel whether more threads are runnable than there are CPUs
// (cpu_load.hpp). If so, somebody queues behind the spinner: often the
// producer itself, woken onto the waiter's CPU or preempted by another
// program on a shared host, and not yet running, so the table cannot tell.
// The spin ends there and the waiter sleeps, except on every eighth such
// wait: a probe that spins on, since background work (niced work counts
// too) can keep the count up while a pair of threads that each sleep at the
// grace answer each other only after a wake-up, past the grace, for good.
// A producer that answers within the grace never costs the reading.
//
// A pair that both sleep at once can settle on one CPU for good: each wakes
// the other where it runs itself, and the second CPU idles. So on every
// eighth wait that finds its producer marked on its own CPU, with a CPU
// free by the kernel's count, the waiter moves itself to another CPU
// (cpu_move.hpp) and spins: the two then run apart.
//
// Where no producer is known, the thread's history decides. When more
// threads wait than there are CPUs, the producer is usually queued behind
// the spinners, every spin runs out, and the spinning takes the CPU the
// producers need. So each thread remembers how its recent waits ended:
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

#include <sched.h>

#include <atomic>
#include <cstdint>

#include "clan_emul/cpu_load.hpp"
#include "clan_emul/cpu_move.hpp"
#include "clan_emul/deadline.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/futex.hpp"
#include "clan_emul/run_delay.hpp"
#include "clan_emul/runner.hpp"
#include "clan_emul/wait_mode.hpp"

namespace clan {

// How this thread's recent waits ended (see the header comment).
struct SpinHistory {
  uint32_t misses = 0;  // consecutive waits answered long after the budget
  uint32_t waits = 0;   // waits since spinning was last given up on (for probes)
  // futex_thread_wake_calls() when this thread's last wait ended: a change
  // means it woke somebody since (likely the producer of this wait).
  uint64_t wakes_seen = 0;
  // This thread's run delay (see run_delay.hpp); tests substitute a script.
  uint64_t (*run_delay_ns)() = &thread_run_delay_ns;
  // Where a producer runs (see runner.hpp); tests substitute a script.
  ProducerState (*producer_state)(uint32_t tid) = &runner_state;
  // Whether the host's CPUs are all taken (see cpu_load.hpp); tests substitute a script.
  bool (*cpus_oversubscribed)() = &clan::cpus_oversubscribed;
  uint32_t load_stops = 0;  // spins the load rule would have ended
  // Whether a spin found the CPUs all taken ends: all but every eighth, so
  // that a pair of threads each sleeping at the grace because background
  // work keeps the count up (even niced work counts) find their way back
  // to spinning once a probe catches an answer.
  bool stop_for_load() { return ++load_stops % kProbeEvery != 0; }
  // Moves this thread off the CPU (see cpu_move.hpp); tests substitute a script.
  bool (*move_off_cpu)() = &clan::move_off_this_cpu;
  uint32_t producer_here_waits = 0;  // waits that found the producer on this CPU
  // Whether a wait that found its producer on this CPU moves away and spins:
  // every eighth, when a CPU is free (see the header comment).
  bool move_from_producer() {
    if (++producer_here_waits % kProbeEvery != 0) return false;
    return !cpus_oversubscribed() && move_off_cpu();
  }
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

// How a wait goes: its mode, its spin budget and, for the adaptive mode,
// where its producer leaves its thread id (nullptr: unknown).
struct WaitPolicy {
  WaitMode mode = WaitMode::kAdaptive;
  int64_t spin_ns = 0;
  const std::atomic<uint32_t>* producer = nullptr;
};

// Whether an adaptive waiter spins on, from what it knows of its producer.
// `woke`: this thread woke somebody since its last wait, and the producer
// has had less than its grace (woken_grace_ns) to start running since (a woken
// thread that runs nowhere after that is most likely queued behind this
// one: every further spin delays it).
inline bool producer_may_answer(const SpinHistory& history, const std::atomic<uint32_t>* producer,
                                bool woke) {
  const uint32_t tid = producer ? producer->load(std::memory_order_relaxed) : 0;
  if (tid == 0) return true;
  switch (history.producer_state(tid)) {
    case ProducerState::kRunningHere: return false;
    case ProducerState::kAsleep: return woke;
    case ProducerState::kUnknown:
    case ProducerState::kRunningElsewhere: break;
  }
  return true;
}

// How long a woken producer has to show itself running, and how long a
// spin goes on before it asks whether every CPU is taken: an eighth of the
// budget, but never less than a cross-CPU wake-up takes on a host that
// idles in a halt-polling loop (a few microseconds), so that a short budget
// (CLAN_SPIN_NS) does not give up on a producer that is on its way; never
// more than the budget itself.
inline constexpr uint64_t kWokenGraceDivisor = 8;
inline constexpr uint64_t kWokenGraceFloorNs = 5'000;
constexpr uint64_t woken_grace_ns(uint64_t budget) {
  const uint64_t eighth = budget / kWokenGraceDivisor;
  const uint64_t grace = eighth > kWokenGraceFloorNs ? eighth : kWokenGraceFloorNs;
  return grace < budget ? grace : budget;
}

// What a spinning waiter calls on every turn while some NIC of the process
// has a wire (wire/wire.hpp): libfabric delivers a remote write only while
// someone reads its completion queue, and a waiter that reads it itself
// sees the write without waiting for the wire's thread to wake.
inline std::atomic<void (*)()> spin_progress_hook{nullptr};
// What a waiter calls before it sleeps while a wire is open: the wire's
// thread, which stands down while waiters spin, watches its queue again.
inline std::atomic<void (*)()> spin_sleep_hook{nullptr};

// Spins until ready() (true), or until the budget, the deadline or the
// producer's state (adaptive) says to stop (false).
template <class Ready>
bool spin_for(Ready& ready, const WaitPolicy& policy, uint64_t budget, Deadline deadline, bool woke) {
  const bool adaptive = policy.mode == WaitMode::kAdaptive;
  const uint64_t start = adaptive ? now_ns() : 0;
  const uint64_t grace = woken_grace_ns(budget);
  bool load_checked = false;
  for (uint32_t n = 1;; ++n) {
    cpu_relax();
    if (void (*progress)() = spin_progress_hook.load(std::memory_order_relaxed)) progress();
    if (ready()) return true;
    if ((n & 63) != 0) continue;
    if (deadline.expired()) return false;
    if (!adaptive) continue;  // a poll spins until the deadline
    const uint64_t spun = now_ns() - start;
    if (spun >= budget) return false;
    const bool early = spun < grace;
    if (!producer_may_answer(spin_history, policy.producer, woke && early)) return false;
    if (!early && !load_checked) {
      load_checked = true;
      if (spin_history.cpus_oversubscribed() && spin_history.stop_for_load()) return false;
    }
  }
}

// Waits until ready() holds, following `policy`; blocks with `sleep` (a
// `Sleep` like FutexSleep below) once announced in `sleepers`.
template <class Ready, class Sleep>
Errc wait_until(Ready&& ready, const WaitPolicy& policy, std::atomic<uint32_t>& sleepers, Sleep& sleep,
                Deadline deadline);

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

// Announces the sleep, re-checks and sleeps until ready() or the deadline;
// `judge` is called once, when the wait ends.
template <class Ready, class Sleep, class Judge>
Errc announce_and_sleep(Ready& ready, std::atomic<uint32_t>& sleepers, Sleep& sleep, Deadline deadline,
                        Judge&& judge) {
  for (;;) {
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    sleep.watch();
    if (ready()) {
      sleepers.fetch_sub(1, std::memory_order_seq_cst);
      judge();
      return Errc::kOk;
    }
    runner_asleep();
    if (void (*before_sleep)() = spin_sleep_hook.load(std::memory_order_relaxed)) before_sleep();
    const bool woke = sleep.block(deadline);
    runner_running();
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

// A producer marked on this CPU: moves this thread off it now and then
// (SpinHistory::move_from_producer), true if it did, and may now spin.
inline bool producer_here_move(SpinHistory& history, const WaitPolicy& policy) {
  if (!policy.producer) return false;
  const uint32_t tid = policy.producer->load(std::memory_order_relaxed);
  return tid != 0 && history.producer_state(tid) == ProducerState::kRunningHere && history.move_from_producer();
}

// Whether an adaptive wait spins at all, yielding once to a producer this
// thread just woke (the kernel may have queued it on this CPU).
inline bool adaptive_should_spin(SpinHistory& history, const WaitPolicy& policy, uint64_t budget,
                                 bool woke) {
  if (budget == 0 || !history.should_spin()) return false;
  if (!producer_may_answer(history, policy.producer, woke)) return producer_here_move(history, policy);
  if (woke && policy.producer && history.producer_state(policy.producer->load(std::memory_order_relaxed)) ==
                                     ProducerState::kAsleep) {
    ::sched_yield();
    return producer_may_answer(history, policy.producer, woke) || producer_here_move(history, policy);
  }
  return true;
}

template <class Ready, class Sleep>
Errc wait_until(Ready&& ready, const WaitPolicy& policy, std::atomic<uint32_t>& sleepers, Sleep& sleep,
                Deadline deadline) {
  if (ready()) return Errc::kOk;
  if (deadline.expired()) return Errc::kTimeout;  // a poll: no spinning
  runner_running();
  SpinHistory& history = spin_history;
  const uint64_t wakes = futex_thread_wake_calls();
  const bool woke = wakes != history.wakes_seen;
  history.wakes_seen = wakes;
  if (policy.mode == WaitMode::kPoll) {
    return spin_for(ready, policy, 0, deadline, woke) ? Errc::kOk : Errc::kTimeout;
  }
  const uint64_t budget = static_cast<uint64_t>(policy.spin_ns > 0 ? policy.spin_ns : 0);
  const bool spin = policy.mode == WaitMode::kAdaptive && adaptive_should_spin(history, policy, budget, woke);
  if (spin && spin_for(ready, policy, budget, deadline, woke)) {
    history.answered_in_time();
    return Errc::kOk;
  }
  // Read only once the spin ran out: the sleep costs system calls anyway.
  const uint64_t slept_at = spin ? now_ns() : 0;
  const uint64_t queued_before = spin ? history.run_delay_ns() : 0;
  // Called once a wait that spun is answered (or timed out) after sleeping.
  auto judge = [&] {
    history.wakes_seen = futex_thread_wake_calls();
    if (!spin) return;
    const uint64_t queued_after = now_ns() - slept_at > 2 * budget ? history.run_delay_ns() : 0;
    if (queued_after > queued_before && queued_after - queued_before > budget) {
      history.answered_late();
    } else {
      history.answered_in_time();
    }
  };
  return announce_and_sleep(ready, sleepers, sleep, deadline, judge);
}

// The adaptive wait with another way to block (a `Sleep` like FutexSleep),
// and no producer known.
template <class Ready, class Sleep>
Errc spin_then_sleep(Ready&& ready, int64_t spin_ns, std::atomic<uint32_t>& sleepers, Sleep& sleep,
                     Deadline deadline) {
  return wait_until(ready, WaitPolicy{WaitMode::kAdaptive, spin_ns, nullptr}, sleepers, sleep, deadline);
}

// Waits on a futex word (the fabric's tripwires, event queues, DMA streams).
template <class Ready>
Errc wait_on_word(Ready&& ready, const WaitPolicy& policy, std::atomic<uint32_t>& sleepers,
                  std::atomic<uint32_t>& word, Deadline deadline) {
  FutexSleep sleep{word};
  return wait_until(ready, policy, sleepers, sleep, deadline);
}

template <class Ready>
Errc spin_then_block(Ready&& ready, int64_t spin_ns, std::atomic<uint32_t>& sleepers,
                     std::atomic<uint32_t>& word, Deadline deadline) {
  return wait_on_word(ready, WaitPolicy{WaitMode::kAdaptive, spin_ns, nullptr}, sleepers, word, deadline);
}

// The producer side: call after publishing the new state.
inline void wake_sleepers(std::atomic<uint32_t>& sleepers, std::atomic<uint32_t>& word) {
  if (sleepers.load(std::memory_order_seq_cst) != 0) {
    word.fetch_add(1, std::memory_order_seq_cst);
    futex_wake_all(&word);
  }
}

}  // namespace clan
