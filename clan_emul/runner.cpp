#include "clan_emul/runner.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mutex>
#include <string>


namespace clan {

namespace {

// One entry per thread id modulo the table's size: (tid << 32) | (cpu + 1)
// while it runs, (tid << 32) while it sleeps. The tid tells a thread's entry
// from that of another thread sharing the slot (pid_max above kEntries).
constexpr uint32_t kEntries = 1u << 16;
constexpr size_t kTableBytes = sizeof(std::atomic<uint64_t>) * kEntries;
std::atomic<std::atomic<uint64_t>*> table{nullptr};

// One table per user and pid namespace (thread ids are the namespace's), in
// POSIX shared memory: tmpfs, so a store to it never waits for a disk, and
// its pages are reserved at creation, so a full filesystem refuses the table
// instead of killing a writer with SIGBUS later.
std::string table_name() {
  struct stat ns {};
  const unsigned long long ino = ::stat("/proc/self/ns/pid", &ns) == 0 ? ns.st_ino : 0;
  return "/clanorb-runners-" + std::to_string(::getuid()) + "-" + std::to_string(ino);
}

std::atomic<uint64_t>* map_table() {
  const int fd = ::shm_open(table_name().c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return nullptr;
  struct stat st {};
  void* p = MAP_FAILED;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::getuid() &&
      (st.st_mode & 077) == 0 && ::posix_fallocate(fd, 0, kTableBytes) == 0) {
    p = ::mmap(nullptr, kTableBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  ::close(fd);
  return p == MAP_FAILED ? nullptr : static_cast<std::atomic<uint64_t>*>(p);
}

// This thread's id and what it last wrote in its entry, which it clears as
// it exits: a thread gone must not read as running.
struct Self {
  uint32_t tid = 0;
  uint64_t published = ~uint64_t{0};
  ~Self() {
    std::atomic<uint64_t>* t = table.load(std::memory_order_acquire);
    uint64_t mine = published;
    if (t && tid != 0 && mine != ~uint64_t{0}) t[tid % kEntries].compare_exchange_strong(mine, 0);
  }
};
thread_local Self self;

// A fork()'s child runs on in the forking thread under another id.
void forget_self_in_child() { self = Self{}; }

Self& me() {
  if (self.tid == 0) self.tid = static_cast<uint32_t>(::gettid());
  return self;
}

void publish(uint64_t state) {
  std::atomic<uint64_t>* t = table.load(std::memory_order_acquire);
  Self& s = me();
  const uint64_t value = uint64_t{s.tid} << 32 | state;
  if (!t || s.published == value) return;
  s.published = value;
  t[s.tid % kEntries].store(value, std::memory_order_release);
}

}  // namespace

void runner_table_open() {
  static std::once_flag once;
  std::call_once(once, [] {
    ::pthread_atfork(nullptr, nullptr, &forget_self_in_child);
    table.store(map_table(), std::memory_order_release);
  });
}

uint32_t runner_tid() { return me().tid; }

void runner_running() {
  const int cpu = ::sched_getcpu();
  if (cpu >= 0) publish(static_cast<uint64_t>(cpu) + 1);
}

void runner_asleep() { publish(0); }

ProducerState runner_state(uint32_t tid) {
  std::atomic<uint64_t>* t = table.load(std::memory_order_acquire);
  if (!t || tid == 0) return ProducerState::kUnknown;
  const uint64_t v = t[tid % kEntries].load(std::memory_order_acquire);
  if (v >> 32 != tid) return ProducerState::kUnknown;
  const uint32_t cpu_plus_one = static_cast<uint32_t>(v);
  if (cpu_plus_one == 0) return ProducerState::kAsleep;
  const int here = ::sched_getcpu();
  return here >= 0 && static_cast<uint32_t>(here) + 1 == cpu_plus_one ? ProducerState::kRunningHere
                                                                      : ProducerState::kRunningElsewhere;
}

}  // namespace clan
