#include "clan_emul/run_delay.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string_view>

namespace clan {

namespace {
// Threads that keep their file open. The others (a server with a thread per
// connection has hundreds) open it for each reading: a descriptor per thread
// would be a descriptor per connection.
constexpr int kKeptFiles = 64;
std::atomic<int> kept_files{0};

int open_schedstat() { return ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC); }

// The file stays open for the thread's life, if one of the kKeptFiles
// places is free when the thread first reads. It names the thread that
// opened it, so the child of a fork() (whose thread inherits the
// thread-local) opens its own.
struct SchedstatFile {
  pid_t owner = -1;
  int fd = -1;
  // The kept file, or -1: open one for this reading.
  int get() {
    const pid_t me = ::gettid();
    if (owner == me) return fd;
    drop();
    owner = me;
    if (kept_files.fetch_add(1, std::memory_order_relaxed) < kKeptFiles) fd = open_schedstat();
    if (fd < 0) kept_files.fetch_sub(1, std::memory_order_relaxed);
    return fd;
  }
  void drop() {
    if (fd >= 0) {
      ::close(fd);
      kept_files.fetch_sub(1, std::memory_order_relaxed);
    }
    fd = -1;
  }
  ~SchedstatFile() { drop(); }
  SchedstatFile() = default;
  SchedstatFile(const SchedstatFile&) = delete;
  SchedstatFile& operator=(const SchedstatFile&) = delete;
};

// The file's text, or an empty string.
std::string_view read_schedstat(char (&buf)[96]) {
  thread_local SchedstatFile file;
  const int kept = file.get();
  const int fd = kept >= 0 ? kept : open_schedstat();
  if (fd < 0) return {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (kept < 0) ::close(fd);
  if (n <= 0) return {};
  buf[n] = '\0';
  return std::string_view(buf, static_cast<size_t>(n));
}
}  // namespace

uint64_t thread_run_delay_ns() {
  char buf[96];
  const std::string_view text = read_schedstat(buf);
  if (text.empty()) return 0;
  // "<time on cpu> <time waiting on a runqueue> <timeslices>\n"
  char* end = nullptr;
  std::strtoull(buf, &end, 10);
  if (end == buf) return 0;
  return std::strtoull(end, nullptr, 10);
}

}  // namespace clan
