// How long the calling thread has been runnable but waiting for a CPU, from
// the scheduler's own accounting (/proc/thread-self/schedstat, second field).
// The spin-then-block wait uses it to tell an oversubscribed CPU (the waiter
// itself had to queue for a CPU) from a peer that was merely asleep.
#pragma once

#include <cstdint>

namespace clan {

// Nanoseconds since the thread started; 0 where the kernel does not say
// (no procfs, no schedstat). A system call per reading (three for a thread
// beyond the first 64 that read: it opens and closes the file each time, so
// that hundreds of threads do not hold a descriptor each): for slow paths only.
uint64_t thread_run_delay_ns();

}  // namespace clan
