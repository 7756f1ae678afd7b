#include "clan_emul/oob_runtime_dir.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "clan_emul/error_detail.hpp"

namespace clan::oob_detail {

std::string default_runtime_dir() {
  if (const char* e = std::getenv("CLAN_RUNTIME_DIR"); e && *e) return e;
  return "/tmp/clanorb-" + std::to_string(::getuid());
}

std::string lock_path(const std::string& dir, const std::string& node) { return dir + "/" + node + ".lock"; }
std::string sock_path(const std::string& dir, const std::string& node) { return dir + "/" + node + ".oob"; }

Errc ensure_dir(const std::string& dir, bool must_own) {
  if (dir.empty()) return set_error(Errc::kInvalidArgument, 0, "the runtime directory is empty");
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return set_error(Errc::kSystem, errno, "cannot create the runtime directory '%s': mkdir", dir.c_str());
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return set_error(Errc::kSystem, errno, "cannot use the runtime directory '%s': stat", dir.c_str());
  }
  if (!S_ISDIR(st.st_mode)) {
    return set_error(Errc::kInvalidArgument, 0, "the runtime directory '%s' exists and is not a directory",
                     dir.c_str());
  }
  // The default lives in shared /tmp: refuse a directory planted by someone else.
  if (must_own && st.st_uid != ::getuid()) {
    return set_error(Errc::kNotPermitted, 0,
                     "the runtime directory '%s' belongs to uid %u, not to this user (uid %u)",
                     dir.c_str(), static_cast<unsigned>(st.st_uid), static_cast<unsigned>(::getuid()));
  }
  return Errc::kOk;
}

}  // namespace clan::oob_detail
