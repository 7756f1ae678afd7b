#include "clan_emul/host_identity.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace clan {

namespace {

// Without blocking: the path may lie in another process's mount namespace,
// where anything (a FIFO) could stand in for the file. One read of a
// regular file, or nothing.
BootId read_boot_id_at(const char* path) {
  BootId id{};
  const int fd = ::open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return id;
  struct stat st {};
  char buf[64] = {};
  const ssize_t got = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? ::read(fd, buf, sizeof buf - 1) : -1;
  ::close(fd);
  const size_t n = got > 0 ? static_cast<size_t>(got) : 0;
  size_t out = 0;
  int half = -1;
  for (size_t i = 0; i < n && out < id.size(); ++i) {
    const char c = buf[i];
    const int v = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
    if (v < 0) continue;
    if (half < 0) {
      half = v;
    } else {
      id[out++] = static_cast<uint8_t>(half << 4 | v);
      half = -1;
    }
  }
  if (out != id.size()) id = {};
  return id;
}

}  // namespace

BootId read_boot_id() { return read_boot_id_at("/proc/sys/kernel/random/boot_id"); }

BootId read_boot_id_of(int pid) {
  char path[80];
  std::snprintf(path, sizeof path, "/proc/%d/root/proc/sys/kernel/random/boot_id", pid);
  return read_boot_id_at(path);
}

uint64_t read_pid_ns() {
  struct stat st {};
  if (::stat("/proc/self/ns/pid", &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_ino);
}

bool HostIdentity::same_host(const HostIdentity& other) const {
  const bool known = std::any_of(boot_id.begin(), boot_id.end(), [](uint8_t b) { return b != 0; });
  return known && pid_ns != 0 && boot_id == other.boot_id && pid_ns == other.pid_ns;
}

HostIdentity this_host() { return HostIdentity{read_boot_id(), read_pid_ns()}; }

}  // namespace clan
