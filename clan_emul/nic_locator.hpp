// What a handshake tells the peer about the NIC its cookies belong to, so
// the peer can reach them: the NIC's id, its host, and its wire address.
// A peer on the same host maps the cookies' memory; a peer on another host
// links its wire to that address first (Nic::connect_wire), after which the
// cookies import as apertures over the wire. Fixed-size, checked on decode.
#pragma once

#include <cstdint>

#include "clan_emul/deadline.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/host_identity.hpp"

namespace clan {

class Nic;

struct NicLocator {
  uint64_t nic_id = 0;
  uint64_t pid_ns = 0;
  BootId boot_id{};
  char wire[64] = {};  // "host:port", NUL-terminated; empty: no wire
};
static_assert(sizeof(NicLocator) == 96);

NicLocator locate(const Nic& nic);

// Whether `peer` is a NIC of this host (its cookies map shared memory).
bool on_this_host(const NicLocator& peer);

// Makes `peer`'s cookies importable on `nic`: nothing to do on this host;
// else links `nic`'s wire to the peer's. kCorrupt for a wire address that
// is not NUL-terminated; kRefused with words when either side has no wire;
// else as Nic::connect_wire.
Errc reach(Nic& nic, const NicLocator& peer, Deadline deadline);

}  // namespace clan
