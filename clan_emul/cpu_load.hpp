// Whether the host's CPUs are oversubscribed right now: more threads
// runnable than CPUs online, from the kernel's instantaneous count (the
// fourth field of /proc/loadavg, "runnable/total"). The adaptive wait
// (spin_wait.hpp) asks once a spin has gone on for a while unanswered: with
// every CPU taken, somebody runnable queues behind the spinner, quite
// possibly the very thread it waits for (a woken server thread placed on
// the waiter's CPU, a producer preempted by another program), and every
// further spin delays the answer instead of catching it.
#pragma once

namespace clan {

// True if more threads are runnable (the caller among them) than the host
// has CPUs online. False where the kernel does not say. One system call
// (a pread of a file the process keeps open): for slow paths only.
bool cpus_oversubscribed();

// The same judgement from a reading of /proc/loadavg and the CPU count
// (false for text it cannot parse); for tests.
bool oversubscribed_from(const char* loadavg_text, long cpus);

}  // namespace clan
