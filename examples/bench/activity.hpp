// What one side of a benchmark did during a timed block: sleeps (voluntary
// context switches), preemptions, futex wake-up system calls, and where it
// ran, so a table can show in which waiting regime a figure was measured.
#pragma once

#include <sys/resource.h>

#include <cstdint>

namespace bench {

struct Activity {
  uint64_t sleeps = 0;
  uint64_t preempted = 0;  // involuntary context switches
  uint64_t wakes = 0;
  int32_t cpu_first = -1, cpu_last = -1;
};

// Both sides' activity during one timed block of `exchanges` round trips or
// messages.
struct BlockActivity {
  Activity a, b;
  uint64_t exchanges = 0;
  double sleeps_per_exchange() const;
  // Both processes were seen on the same CPU at the start or the end.
  bool shared_cpu() const;
};

// Started at construction; done() is the calling thread's activity since.
class ActivityMeter {
 public:
  ActivityMeter();
  Activity done() const;

 private:
  rusage r0_{};
  uint64_t w0_ = 0;
  int cpu0_ = -1;
};

}  // namespace bench
