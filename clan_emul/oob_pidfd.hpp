// Watching a peer's process on this host: a pidfd becomes readable once its
// process has exited. Not part of the public API.
#pragma once

#include <poll.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

namespace clan::oob_detail {

// -1 if the pid cannot be watched (ESRCH is not proof of death: pid namespaces).
inline int open_pidfd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

// A pidfd is readable once its process has exited.
inline bool pidfd_fired(int pidfd) {
  pollfd p{pidfd, POLLIN, 0};
  return pidfd >= 0 && ::poll(&p, 1, 0) > 0;
}

}  // namespace clan::oob_detail
