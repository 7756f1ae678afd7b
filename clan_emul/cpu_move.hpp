// Moves the calling thread to another CPU. Two threads of a ping-pong that
// both sleep on every message tend to stay on one CPU: each wakes the other
// where it runs itself, the woken one queues behind the waker until the
// waker sleeps, and the second CPU idles while every round trip pays two
// wake-ups. The adaptive wait (spin_wait.hpp) breaks that by moving the
// waiter off the CPU its producer runs on, once in a while, when a CPU is
// free: from then on the two spin on different CPUs.
#pragma once

namespace clan {

// Moves the calling thread to any other CPU its affinity allows, and gives
// it its own affinity mask back (a thread stays where it was moved). False
// if it may run on no other CPU or a system call failed. Two system calls
// and a migration: for rare use only.
bool move_off_this_cpu();

}  // namespace clan
