// Thin wrappers over futex(2) for words in memory shared between processes
// (so never FUTEX_PRIVATE_FLAG). Callers keep the fast path free of these:
// they are used only after announcing themselves as sleepers.
#pragma once

#include <atomic>
#include <cstdint>

#include "clan_emul/deadline.hpp"

namespace clan {

// Sleeps while *word == expected, until woken or the deadline passes.
// Returns false on timeout, true otherwise (woken, value changed, or signal).
bool futex_wait(std::atomic<uint32_t>* word, uint32_t expected, Deadline deadline);
// Wakes every thread of any process sleeping on the word.
void futex_wake_all(std::atomic<uint32_t>* word);

// How many wake-up system calls this process has made (for tests that check
// the write path stays free of system calls when nobody sleeps).
uint64_t futex_wake_calls();
// How many of those the calling thread made: the adaptive wait takes a
// change as a sign that this thread just woke the thread that will answer it.
uint64_t futex_thread_wake_calls();
// Counts a wake-up made another way (a handler posted to a sleeping thread's
// io_context, itself a futex wake inside), so that futex_wake_calls() counts
// every wake-up this process makes.
void count_wake_call();

// Busy-wait hint for spin loops.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace clan
