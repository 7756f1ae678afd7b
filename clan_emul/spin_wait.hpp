// Spin-then-block: the one waiting policy of the fabric. Spin (no system
// call) for a bounded budget while the answer is likely to come from another
// core within a cache-line round trip; then announce the sleep, re-check and
// sleep on a futex word. A producer changes the state, bumps the word, and
// makes the wake-up system call only if it sees a sleeper announced. Both
// sides use seq_cst, so either the producer sees the sleeper or the sleeper
// sees the new state.
#pragma once

#include <atomic>
#include <cstdint>

#include "clan_emul/deadline.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/futex.hpp"

namespace clan {

template <class Ready>
Errc spin_then_block(Ready&& ready, int64_t spin_ns, std::atomic<uint32_t>& sleepers,
                     std::atomic<uint32_t>& word, Deadline deadline) {
  if (ready()) return Errc::kOk;
  if (deadline.expired()) return Errc::kTimeout;  // a poll: no spinning
  const uint64_t spin_until = now_ns() + static_cast<uint64_t>(spin_ns > 0 ? spin_ns : 0);
  for (uint32_t n = 1;; ++n) {
    cpu_relax();
    if (ready()) return Errc::kOk;
    if ((n & 63) == 0 && (now_ns() >= spin_until || deadline.expired())) break;
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
