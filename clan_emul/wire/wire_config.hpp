// How a NIC reaches NICs of other hosts: the libfabric provider and the
// address its wire listens on (clan_emul/wire/DESIGN.md).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace clan {

struct WireConfig {
  // The address peers on other hosts reach this NIC at: an IPv4 address or
  // host name of this host, with ":port" or without (port 0: any free one).
  // Empty: the NIC has no wire and reaches only NICs of its own host.
  std::string listen;
  // libfabric's provider: tcp runs everywhere; verbs and others where the
  // hardware is (fi_info -l lists them).
  std::string provider = "tcp";
  // Bytes of writes in flight per connection beyond the provider's inject
  // size: the NIC's transmit buffer. A write that finds it full waits for
  // the wire (within its deadline).
  size_t staging_bytes = size_t{1} << 20;
  // How long set-up (connecting to a peer NIC, validating a cookie) may take.
  std::chrono::milliseconds setup_timeout{10000};
  // How long a write that has begun (a part of it is out) waits for a peer
  // that takes nothing more: what is out cannot be withdrawn, so a write
  // that stalls past this closes the connection rather than wait forever.
  // As long as the out-of-band manager's peer_timeout: a peer of another
  // host silent that long is declared dead there too.
  std::chrono::milliseconds stall_timeout{30000};
};

}  // namespace clan
