// The lock that holds a node's name: an OFD lock (F_OFD_SETLK, owned by the
// open file, released by the kernel when the process dies) on
// <runtime_dir>/<node>.lock for the node's whole life. The lock, not the
// socket file, says whether a node is alive. Not part of the public API.
#pragma once

#include <string>

#include "clan_emul/error.hpp"

namespace clan::oob_detail {

class NodeLock {
 public:
  NodeLock() = default;
  // Registered by address for fork() (below): never copied or moved.
  NodeLock(const NodeLock&) = delete;
  NodeLock& operator=(const NodeLock&) = delete;

  // Takes node `node`'s name in `dir`: kAddressInUse while a live process
  // holds it. From then on a fork()ed child closes its copy of the
  // descriptor, so that it never holds the parent's name.
  Errc acquire(const std::string& dir, const std::string& node);
  // Removes the node's socket and lock files, then lets the lock go. The
  // owner process only; idempotent, and harmless after a failed acquire().
  void release();
  // Where the node binds its ROUTER.
  const std::string& sock_path() const { return sock_path_; }

 private:
  friend struct LockRegistry;

  int fd_ = -1;
  std::string lock_path_, sock_path_;
};

// True if a live process holds <dir>/<node>.lock.
bool node_alive(const std::string& dir, const std::string& node);

}  // namespace clan::oob_detail
