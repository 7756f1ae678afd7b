// Where the threads of this host run, for the adaptive wait (spin_wait.hpp).
// Spinning pays only while the thread that will answer runs on another CPU:
// spinning while it is asleep delays nothing but burns a CPU, and spinning
// while it waits for this very CPU keeps it from answering at all (the
// lock-step of two threads sharing a CPU, each spinning out its budget while
// the other queues behind it). So each thread publishes, in a table mapped by
// every process of the user and pid namespace (POSIX shared memory, mapped once
// and never unmapped), whether it runs and on which CPU; a thread that fires
// a tripwire or posts to an event queue leaves its thread id in a word beside
// it (NicView::tripwire_producer, queue_producer), and the waiter reads that
// thread's entry. All plain loads and stores: the CPU comes from the rseq
// area glibc registers (sched_getcpu, no system call), and a thread writes
// its entry only when its state changes (it wakes, it sleeps, it moves).
#pragma once

#include <atomic>
#include <cstdint>

namespace clan {

// What a waiter learns about the thread that will answer it.
enum class ProducerState : uint8_t {
  kUnknown,           // no table, no thread named, or its entry is another thread's
  kAsleep,            // blocked in a fabric wait
  kRunningHere,       // marked running on the waiter's own CPU: it queues behind the waiter
  kRunningElsewhere,  // running on another CPU: it can answer while the waiter spins
};

// Maps the host's table (once per process; Nic::open calls it). Without it
// (no runtime directory), every state reads kUnknown and waits behave as
// they would without the table.
void runner_table_open();

// This thread's id, as producers leave it beside a tripwire (0 if unknown).
uint32_t runner_tid();
// This thread runs (on the CPU it is on now) / is about to sleep.
void runner_running();
void runner_asleep();
// What thread `tid` is doing, as seen from the calling thread's CPU.
ProducerState runner_state(uint32_t tid);

// A producer word that has seen two producers: it names nobody (kUnknown)
// from then on, so a queue that many threads post to (a server's monitor,
// a completion queue over many VIs) is not written per message.
inline constexpr uint32_t kManyProducers = ~0u;

// Records the calling thread as the producer in `word`: written once by the
// first producer and once more by a second, never per message.
inline void note_producer(std::atomic<uint32_t>* word) {
  const uint32_t me = runner_tid();
  const uint32_t was = word->load(std::memory_order_relaxed);
  if (was == me || was == kManyProducers) return;
  word->store(was == 0 ? me : kManyProducers, std::memory_order_relaxed);
}

}  // namespace clan
