#include "clan_emul/futex.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

namespace clan {

static_assert(sizeof(std::atomic<uint32_t>) == 4 && std::atomic<uint32_t>::is_always_lock_free);

bool futex_wait(std::atomic<uint32_t>* word, uint32_t expected, Deadline deadline) {
  if (deadline.expired()) return false;
  timespec ts{};
  timespec* tsp = nullptr;
  if (!deadline.is_never()) {
    ts = deadline.to_timespec();
    tsp = &ts;
  }
  // FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time, matching Deadline.
  long rc = syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_BITSET, expected, tsp,
                    nullptr, FUTEX_BITSET_MATCH_ANY);
  if (rc == -1 && errno == ETIMEDOUT) return false;
  return true;
}

static std::atomic<uint64_t> wake_calls{0};
static thread_local uint64_t thread_wake_calls = 0;
uint64_t futex_wake_calls() { return wake_calls.load(std::memory_order_relaxed); }
uint64_t futex_thread_wake_calls() { return thread_wake_calls; }
void count_wake_call() {
  wake_calls.fetch_add(1, std::memory_order_relaxed);
  ++thread_wake_calls;
}

void futex_wake_all(std::atomic<uint32_t>* word) {
  count_wake_call();
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace clan
