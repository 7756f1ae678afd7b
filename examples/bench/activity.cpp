#include "bench/activity.hpp"

#include <sched.h>

#include "clan_emul/futex.hpp"

namespace bench {

double BlockActivity::sleeps_per_exchange() const {
  return exchanges ? static_cast<double>(a.sleeps + b.sleeps) / static_cast<double>(exchanges) : 0;
}

bool BlockActivity::shared_cpu() const {
  return (a.cpu_first >= 0 && a.cpu_first == b.cpu_first) || (a.cpu_last >= 0 && a.cpu_last == b.cpu_last);
}

ActivityMeter::ActivityMeter() {
  getrusage(RUSAGE_THREAD, &r0_);
  w0_ = clan::futex_wake_calls();
  cpu0_ = sched_getcpu();
}

Activity ActivityMeter::done() const {
  rusage r1{};
  getrusage(RUSAGE_THREAD, &r1);
  Activity a;
  a.sleeps = static_cast<uint64_t>(r1.ru_nvcsw - r0_.ru_nvcsw);
  a.preempted = static_cast<uint64_t>(r1.ru_nivcsw - r0_.ru_nivcsw);
  a.wakes = clan::futex_wake_calls() - w0_;
  a.cpu_first = cpu0_;
  a.cpu_last = sched_getcpu();
  return a;
}

}  // namespace bench
