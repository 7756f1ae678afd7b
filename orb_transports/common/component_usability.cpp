#include "orb_transports/common/component_usability.hpp"

#include <sys/stat.h>

#include <cstdlib>

#include "clan_emul/oob_core.hpp"
#include "orb_transports/common/fabric.hpp"

namespace clanorb {
namespace {

std::string transport_of_address(const std::string& address) {
  const size_t start = address.find(':') + 1;  // after "giop:"
  return address.substr(0, address.find(':', start));
}

}  // namespace

std::string this_runtime_dir() {
  std::string dir = clan::oob_detail::default_runtime_dir();
  // Published canonical, so that a client in another working directory, or
  // reaching it through a symlink, compares it rightly.
  if (char* full = ::realpath(dir.c_str(), nullptr)) {
    dir = full;
    std::free(full);
  }
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();  // as clan_emul stores it
  return dir;
}

bool same_directory(const std::string& a, const std::string& b) {
  if (a == b) return true;
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

std::string why_unusable_here(const IorComponent& c, bool linked) {
  if (!linked) return transport_of_address(c.address) + " is not linked into this program";
  if (c.boot_id != boot_id()) {
    return "its server runs on another host, or before this host's last boot (boot id " +
           c.boot_id + "; this host's is " + boot_id() + ")";
  }
  if (!c.runtime_dir.empty() && !same_directory(c.runtime_dir, this_runtime_dir())) {
    return "its server uses the runtime directory " + c.runtime_dir + ", this process uses " +
           this_runtime_dir() + " (another user, or another CLAN_RUNTIME_DIR)";
  }
  return "";
}

}  // namespace clanorb
