#include "clan_emul/nic_locator.hpp"

#include <cstring>

#include "clan_emul/error_detail.hpp"
#include "clan_emul/nic.hpp"

namespace clan {

NicLocator locate(const Nic& nic) {
  NicLocator l;
  l.nic_id = nic.id();
  const HostIdentity host = this_host();
  l.pid_ns = host.pid_ns;
  l.boot_id = host.boot_id;
  const std::string wire = nic.wire_address();
  std::memcpy(l.wire, wire.data(), std::min(wire.size(), sizeof l.wire - 1));
  return l;
}

bool on_this_host(const NicLocator& peer) {
  return this_host().same_host(HostIdentity{peer.boot_id, peer.pid_ns});
}

Errc reach(Nic& nic, const NicLocator& peer, Deadline deadline) {
  if (on_this_host(peer)) return Errc::kOk;
  if (peer.nic_id == nic.id()) {
    return set_error(Errc::kForgedCookie, 0, "a NIC of another host claims NIC '%s''s own id",
                     nic.config().name.c_str());
  }
  if (std::memchr(peer.wire, 0, sizeof peer.wire) == nullptr) return Errc::kCorrupt;
  if (peer.wire[0] == 0) {
    return set_error(Errc::kRefused, 0, "the peer NIC is on another host and has no wire (CLAN_WIRE_LISTEN)");
  }
  if (nic.wire_address().empty()) {
    return set_error(Errc::kRefused, 0,
                     "NIC '%s' has no wire, and the peer NIC is on another host (at %s); set CLAN_WIRE_LISTEN",
                     nic.config().name.c_str(), peer.wire);
  }
  return nic.connect_wire(peer.nic_id, peer.wire, deadline);
}

}  // namespace clan
