// For a forked child: become a process of "another host" as the fabric
// tells hosts apart (clan_emul/host_identity.hpp): a mount namespace of its
// own with a fresh boot id bind-mounted over the kernel's. Needs
// CAP_SYS_ADMIN (CI runs as root); without it the child reports why and
// the test fails with that message, never skips.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace clan::test {

// 0 on success; else prints the cause on stderr and returns non-zero.
inline int become_other_host(const char* boot_id = "0ddba11c-0ffe-4e55-8000-0123456789ab") {
  auto fail = [](const char* what) {
    std::fprintf(stderr, "cannot pose as another host: %s: %s (errno %d); these tests need root "
                 "(CAP_SYS_ADMIN) for a mount namespace\n", what, std::strerror(errno), errno);
    return 97;
  };
  if (::unshare(CLONE_NEWNS) != 0) return fail("unshare(CLONE_NEWNS)");
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return fail("mount --make-rprivate /");
  char path[] = "/tmp/clanorb-boot-id-XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) return fail("mkstemp");
  const std::string text = std::string(boot_id) + "\n";
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written) return fail("write boot id");
  const int bound = ::mount(path, "/proc/sys/kernel/random/boot_id", nullptr, MS_BIND, nullptr);
  ::unlink(path);  // the bind mount keeps the file
  if (bound != 0) return fail("bind mount over /proc/sys/kernel/random/boot_id");
  return 0;
}

}  // namespace clan::test
