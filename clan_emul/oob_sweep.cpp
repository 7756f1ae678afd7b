#include "clan_emul/oob_sweep.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>
#include <string_view>

#include "clan_emul/oob_wire.hpp"

namespace clan::oob_detail {
namespace {

// "<node>.lock" or "<node>.oob" -> "<node>"; empty for anything else.
std::string node_of(std::string_view file) {
  for (std::string_view suffix : {".lock", ".oob"}) {
    if (file.size() > suffix.size() && file.substr(file.size() - suffix.size()) == suffix) {
      std::string_view node = file.substr(0, file.size() - suffix.size());
      if (oob_wire::valid_node_name(node)) return std::string(node);
    }
  }
  return {};
}

std::set<std::string> node_names(const std::string& dir) {
  std::set<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return names;
  std::size_t read = 0;
  while (dirent* e = ::readdir(d)) {
    if (++read > kSweepMaxEntries) break;
    if (std::string n = node_of(e->d_name); !n.empty()) names.insert(std::move(n));
  }
  ::closedir(d);
  return names;
}

// Takes the lock of `node` if nobody holds it, and removes its files while
// holding it. A node starting under that name meanwhile either holds the lock
// first (we leave it) or finds the file gone from the path once it holds it,
// and makes a new one (acquire_lock).
bool remove_if_dead(const std::string& dir, const std::string& node) {
  const std::string lock = dir + "/" + node + ".lock";
  int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return false;
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  bool removed = false;
  struct stat held {}, at_path {};
  if (::fcntl(fd, F_OFD_SETLK, &fl) == 0 && ::fstat(fd, &held) == 0 &&
      ::stat(lock.c_str(), &at_path) == 0 && held.st_dev == at_path.st_dev &&
      held.st_ino == at_path.st_ino) {
    ::unlink((dir + "/" + node + ".oob").c_str());
    ::unlink(lock.c_str());
    removed = true;
  }
  ::close(fd);
  return removed;
}

}  // namespace

std::size_t sweep_stale_nodes(const std::string& dir, const std::string& self) {
  std::size_t removed = 0;
  for (const std::string& node : node_names(dir)) {
    if (removed == kSweepMaxNodes) break;
    if (node != self && remove_if_dead(dir, node)) ++removed;
  }
  return removed;
}

}  // namespace clan::oob_detail
