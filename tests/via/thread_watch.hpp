// What another thread of this process does while it waits, read from the
// kernel's accounts of it: the voluntary context switches in
// /proc/self/task/<tid>/status (one per sleep, a futex wait among them;
// preemption counts apart, as involuntary) and its CPU time
// (pthread_getcpuclockid). The wait-mode tests tell sleeping from spinning
// with them, without timing anything.
#pragma once

#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

namespace via_test {

inline pid_t this_thread_tid() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

// The thread's voluntary context switches so far; -1 if unreadable.
inline int64_t voluntary_switches(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/status");
  const std::string key = "voluntary_ctxt_switches:";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) == 0) return std::stoll(line.substr(key.size()));
  }
  return -1;
}

// CPU time a thread has used, in nanoseconds, from its CPU-time clock.
inline int64_t cpu_ns(clockid_t clock) {
  timespec ts{};
  if (::clock_gettime(clock, &ts) != 0) return -1;
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline clockid_t cpu_clock_of(pthread_t thread) {
  clockid_t c{};
  return ::pthread_getcpuclockid(thread, &c) == 0 ? c : CLOCK_THREAD_CPUTIME_ID;
}

}  // namespace via_test
