#include "orb_transports/common/component_usability.hpp"

#include <sys/stat.h>

#include <cstdlib>

#include "clan_emul/oob_core.hpp"
#include "orb_transports/common/fabric.hpp"
#include "orb_transports/common/ior_component.hpp"

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
  if (c.boot_id != boot_id()) return why_not_across_hosts(c);
  if (!c.runtime_dir.empty() && !same_directory(c.runtime_dir, this_runtime_dir())) {
    return "its server uses the runtime directory " + c.runtime_dir + ", this process uses " +
           this_runtime_dir() + " (another user, or another CLAN_RUNTIME_DIR)";
  }
  return "";
}

// A server of another host: reached over the wire, if it says where and
// this process can be written back to (its own -ORBclanHost).
std::string why_not_across_hosts(const IorComponent& c) {
  const std::string elsewhere = "its server runs on another host (boot id " + c.boot_id + "; this host's is " +
                                boot_id() + ")";
  if (!scheme_crosses_hosts(transport_of_address(c.address))) {
    return elsewhere + ", and " + transport_of_address(c.address) + " does not cross hosts";
  }
  if (c.reach.empty()) return elsewhere + " and publishes no address for other hosts (its -ORBclanHost)";
  if (fabric_options().host.empty()) {
    return elsewhere + ", and this process has no -ORBclanHost at which the server could write back to it";
  }
  return "";
}

std::string address_from_here(const IorComponent& c) {
  if (c.boot_id == boot_id() || c.reach.empty()) return c.address;
  // "giop:clan:NODE:PORT" -> "giop:clan:NODE@HOST:OOBPORT:PORT"
  const size_t port_at = c.address.rfind(':');
  return c.address.substr(0, port_at) + "@" + c.reach + c.address.substr(port_at);
}

}  // namespace clanorb
