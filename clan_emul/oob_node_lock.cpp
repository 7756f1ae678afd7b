#include "clan_emul/oob_node_lock.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "clan_emul/deadline.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/oob_runtime_dir.hpp"

namespace clan::oob_detail {

namespace {
std::mutex g_registry_mu;
}  // namespace

// ---- fork: the child must not keep the parent's node name locked. ----
struct LockRegistry {
  static std::mutex& mu() { return g_registry_mu; }
  static std::vector<NodeLock*>& locks() {
    // Never destroyed: a manager owned by another static object may be
    // destroyed (and unregister) after this file's statics are gone.
    static auto* r = new std::vector<NodeLock*>;
    return *r;
  }
  static void prepare() { mu().lock(); }
  static void parent() { mu().unlock(); }
  static void child() {
    // Only close(): async-signal-safe. The parent's OFD lock stays held by the parent.
    for (NodeLock* l : locks()) {
      if (l->fd_ >= 0) ::close(l->fd_);
      l->fd_ = -1;
    }
    mu().unlock();
  }
  static void add(NodeLock* l) {
    static std::once_flag once;
    std::call_once(once, [] { pthread_atfork(prepare, parent, child); });
    std::lock_guard g(mu());
    locks().push_back(l);
  }
  static void remove(NodeLock* l) {
    std::lock_guard g(mu());
    auto& r = locks();
    r.erase(std::remove(r.begin(), r.end(), l), r.end());
  }
  // Whether a lock of this process holds the lock file at `path`.
  static bool held_here(const std::string& path) {
    struct stat want {};
    if (::stat(path.c_str(), &want) != 0) return false;
    std::lock_guard g(mu());
    return std::any_of(locks().begin(), locks().end(), [&](const NodeLock* l) {
      struct stat st {};
      return l->fd_ >= 0 && ::fstat(l->fd_, &st) == 0 && st.st_dev == want.st_dev &&
             st.st_ino == want.st_ino;
    });
  }
};

namespace {

Errc name_in_use(const std::string& node, const std::string& path) {
  if (LockRegistry::held_here(path)) {
    return set_error(Errc::kAddressInUse, 0, "node name '%s' is already taken by this process (lock '%s')",
                     node.c_str(), path.c_str());
  }
  return set_error(Errc::kAddressInUse, 0, "node name '%s' is in use by another process (lock '%s' is held)",
                   node.c_str(), path.c_str());
}

bool names_file(const std::string& path, int fd) {
  struct stat a {}, b {};
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// Takes the lock, or sees the file leave the path: a node sweeping a dead
// holder's files (oob_sweep.hpp) holds the lock only while it unlinks them.
// 0 locked, -1 the file left the path, else the lock's errno.
// A sweeper holds the lock for two unlinks, but may be preempted meanwhile
// on a loaded host: the grace is generous, and costs only a name truly in
// use that long before it is reported.
int lock_or_see_swept(int fd, const std::string& path) {
  constexpr auto kSweepGrace = std::chrono::milliseconds(250);
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  const Deadline grace = Deadline::after(kSweepGrace);
  for (;;) {
    if (::fcntl(fd, F_OFD_SETLK, &fl) == 0) return 0;
    int e = errno;
    if (e != EAGAIN && e != EACCES) return e;
    if (!names_file(path, fd)) return -1;
    if (grace.expired()) return e;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Takes the node's OFD lock; returns the descriptor that holds it.
Result<int> acquire_lock(const std::string& node, const std::string& path) {
  // Each retry follows a sweep that removed the file: sweepers are few.
  for (int attempt = 0; attempt < 64; ++attempt) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return set_error(Errc::kSystem, errno, "cannot create the lock file '%s': open", path.c_str());
    int e = lock_or_see_swept(fd, path);
    // The previous holder (or a sweeper) unlinks the file before releasing
    // it: make sure we locked the file that is at the path now.
    if (e == 0 && names_file(path, fd)) return fd;
    ::close(fd);
    if (e == EAGAIN || e == EACCES) return name_in_use(node, path);
    if (e > 0) return set_error(Errc::kSystem, e, "cannot lock '%s': fcntl(F_OFD_SETLK)", path.c_str());
  }
  return set_error(Errc::kAddressInUse, 0, "node name lock '%s' changed hands 64 times while taking it",
                   path.c_str());
}

}  // namespace

Errc NodeLock::acquire(const std::string& dir, const std::string& node) {
  lock_path_ = lock_path(dir, node);
  sock_path_ = oob_detail::sock_path(dir, node);
  auto fd = acquire_lock(node, lock_path_);
  if (!fd) return fd.error();
  fd_ = fd.value();
  LockRegistry::add(this);  // from here on release() removes the files
  return Errc::kOk;
}

void NodeLock::release() {
  LockRegistry::remove(this);
  if (fd_ < 0) return;
  // Unlink while still holding the lock: whoever locks the path next gets a new file.
  ::unlink(sock_path_.c_str());
  ::unlink(lock_path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

bool node_alive(const std::string& dir, const std::string& node) {
  int fd = ::open(lock_path(dir, node).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  struct flock fl {};
  fl.l_type = F_RDLCK;  // conflicts with the holder's write lock
  fl.l_whence = SEEK_SET;
  bool alive = ::fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
  ::close(fd);
  return alive;
}

}  // namespace clan::oob_detail
