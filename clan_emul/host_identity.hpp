// Which host a process runs on, as the fabric tells hosts apart: the
// kernel's boot id (a host of its own in a network and mount namespace
// gets one of its own, scripts/two_hosts.sh) and the pid namespace, since
// shared memory reaches only processes that see each other's /proc.
#pragma once

#include <array>
#include <cstdint>

namespace clan {

using BootId = std::array<uint8_t, 16>;

struct HostIdentity {
  BootId boot_id{};     // /proc/sys/kernel/random/boot_id; all zero if unreadable
  uint64_t pid_ns = 0;  // /proc/self/ns/pid's inode; 0 if unreadable

  // Whether a process of `other` shares this host's memory: same boot id
  // and pid namespace, both known.
  bool same_host(const HostIdentity& other) const;
};

// Read at each call (a handshake's): a forked child that moved into a
// namespace of its own is told apart from its parent.
HostIdentity this_host();

// The boot id file's UUID as 16 bytes; all zero if it cannot be read.
// With a pid: the boot id process `pid` sees (through /proc/PID/root, in
// its own mount namespace).
BootId read_boot_id();
BootId read_boot_id_of(int pid);
uint64_t read_pid_ns();

}  // namespace clan
