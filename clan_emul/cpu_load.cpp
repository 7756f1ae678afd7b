#include "clan_emul/cpu_load.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace clan {

namespace {
// One descriptor for the process, opened on first use and kept: /proc/loadavg
// is the same file for every thread (-1: unavailable). Only procfs's own: a
// container may put an lxcfs (FUSE) file there, whose reading goes to a
// daemon and could block a spinning waiter.
int open_loadavg() {
  const int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  struct statfs fs {};
  if (fd >= 0 && (::fstatfs(fd, &fs) != 0 || fs.f_type != PROC_SUPER_MAGIC)) {
    ::close(fd);
    return -1;
  }
  return fd;
}
int loadavg_fd() {
  static const int fd = open_loadavg();
  return fd;
}
long online_cpus() {
  static const long n = ::get_nprocs();
  return n;
}
}  // namespace

bool oversubscribed_from(const char* text, long cpus) {
  // "0.42 0.31 0.20 3/412 12345\n": the fourth field counts runnable threads.
  const char* p = text;
  for (int field = 0; field < 3; ++field) {
    p = std::strchr(p, ' ');
    if (!p) return false;
    ++p;
  }
  char* end = nullptr;
  const long runnable = std::strtol(p, &end, 10);
  if (end == p || *end != '/' || cpus <= 0) return false;
  return runnable > cpus;
}

bool cpus_oversubscribed() {
  const int fd = loadavg_fd();
  if (fd < 0) return false;
  char buf[128];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return false;
  buf[n] = '\0';
  return oversubscribed_from(buf, online_cpus());
}

}  // namespace clan
