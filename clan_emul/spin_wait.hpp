// Spin, yield, then block: the one waiting policy of the fabric.
//   1. Spin (no system call) for the budget, while the answer is likely to
//      come from another core within a cache-line round trip.
//   2. Yield the CPU, still runnable, for up to kYieldBudgets more budgets.
//      A futex wake-up costs tens of microseconds on a VM (about 55 us on
//      the 2-vCPU VMs we measure on), more than the spin budget. Once both
//      sides of a ping-pong have slept, each then gives up spinning just
//      before the other's late wake-up lands, so both sleep at every exchange
//      from then on (about 115 us a round trip instead of 1 to 2 us). A
//      runnable waiter needs no wake-up, which ends that; and on a busy core
//      each yield hands the core to a thread with work.
//   3. Announce the sleep, re-check and sleep on a futex word. A producer
//      changes the state, bumps the word, and makes the wake-up system call
//      only if it sees a sleeper announced. Both sides use seq_cst, so either
//      the producer sees the sleeper or the sleeper sees the new state.
// A budget of 0 (or less) goes straight to sleep.
#pragma once

#include <sched.h>

#include <atomic>
#include <cstdint>

#include "clan_emul/deadline.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/futex.hpp"

namespace clan {

inline constexpr uint64_t kYieldBudgets = 3;

template <class Ready>
Errc spin_then_block(Ready&& ready, int64_t spin_ns, std::atomic<uint32_t>& sleepers,
                     std::atomic<uint32_t>& word, Deadline deadline) {
  if (ready()) return Errc::kOk;
  if (deadline.expired()) return Errc::kTimeout;  // a poll: no spinning
  const uint64_t budget = spin_ns > 0 ? static_cast<uint64_t>(spin_ns) : 0;
  const uint64_t start = now_ns();
  for (uint32_t n = 1;; ++n) {
    cpu_relax();
    if (ready()) return Errc::kOk;
    if ((n & 63) == 0 && (now_ns() >= start + budget || deadline.expired())) break;
  }
  const uint64_t yield_until = start + (1 + kYieldBudgets) * budget;
  while (now_ns() < yield_until && !deadline.expired()) {
    sched_yield();
    if (ready()) return Errc::kOk;
  }
  for (;;) {
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    const uint32_t seen = word.load(std::memory_order_seq_cst);
    if (ready()) {
      sleepers.fetch_sub(1, std::memory_order_seq_cst);
      return Errc::kOk;
    }
    const bool woke = futex_wait(&word, seen, deadline);
    sleepers.fetch_sub(1, std::memory_order_seq_cst);
    if (ready()) return Errc::kOk;
    if (!woke || deadline.expired()) return Errc::kTimeout;
  }
}

// The producer side: call after publishing the new state.
inline void wake_sleepers(std::atomic<uint32_t>& sleepers, std::atomic<uint32_t>& word) {
  if (sleepers.load(std::memory_order_seq_cst) != 0) {
    word.fetch_add(1, std::memory_order_seq_cst);
    futex_wake_all(&word);
  }
}

}  // namespace clan
