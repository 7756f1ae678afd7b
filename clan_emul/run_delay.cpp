#include "clan_emul/run_delay.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

namespace clan {

namespace {
// The file stays open for the thread's life: one pread per reading. It
// names the thread that opened it, so the child of a fork() (whose thread
// inherits the thread-local) opens its own.
struct SchedstatFile {
  pid_t owner = -1;
  int fd = -1;
  int get() {
    const pid_t me = ::gettid();
    if (owner != me) {
      if (fd >= 0) ::close(fd);
      fd = ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
      owner = me;
    }
    return fd;
  }
  ~SchedstatFile() {
    if (fd >= 0) ::close(fd);
  }
  SchedstatFile() = default;
  SchedstatFile(const SchedstatFile&) = delete;
  SchedstatFile& operator=(const SchedstatFile&) = delete;
};
}  // namespace

uint64_t thread_run_delay_ns() {
  thread_local SchedstatFile file;
  const int fd = file.get();
  if (fd < 0) return 0;
  char buf[96];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return 0;
  buf[n] = '\0';
  // "<time on cpu> <time waiting on a runqueue> <timeslices>\n"
  char* end = nullptr;
  std::strtoull(buf, &end, 10);
  if (end == buf) return 0;
  return std::strtoull(end, nullptr, 10);
}

}  // namespace clan
