// Whether a clanorb client in this process can use the address of an IOR
// component, and if not, why: the plugins log the reason (a client then uses
// the IOR's other addresses, usually tcp) and clanorb-ior prints it.
#pragma once

#include <cstdint>
#include <string>

#include "orb_transports/common/ior_component.hpp"

namespace clanorb {

// The clan_emul runtime directory this process's nodes use (and look for
// other nodes in): $CLAN_RUNTIME_DIR, else /tmp/clanorb-<uid>; canonical
// once it exists.
std::string this_runtime_dir();

// Two spellings of one directory ("/tmp/x/." and "/tmp/x", a symlink) are
// the same. A string comparison first: the other spelling comes from an IOR,
// and a published directory is canonical, so stat is rarely needed.
bool same_directory(const std::string& a, const std::string& b);

// "" if usable; otherwise the reason, a phrase such as "its server runs on
// another host (boot id ...)". `linked` says whether the component's transport
// is in this program.
std::string why_unusable_here(const IorComponent& c, bool linked);

// For a component of another host: "" if a client here reaches it (its
// transport crosses hosts, the server publishes where, and this process has
// its own -ORBclanHost), else why not.
std::string why_not_across_hosts(const IorComponent& c);

// The address a client here connects to: the component's, or for a server
// of another host "giop:<name>:NODE@HOST:PORT:PORT" (its node's tcp address).
std::string address_from_here(const IorComponent& c);

}  // namespace clanorb
