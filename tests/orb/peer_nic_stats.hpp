// The server peer's NIC re-mappings, for the overcommit test: how often the
// transports' NIC made a connection's endpoint resident again for want of
// frames (paper 004 sect. 6.4), read from the NIC the server's endpoint uses
// (the fabric's for giop:clan and giop:otp, the VIA NIC's for giop:via).
// Built into orb_test_peer only: orb_test_peer_plain has no such NIC.
#pragma once

#include <string>

namespace clan::orbtest {

// The NIC behind a -ORBendPoint, from its scheme.
enum class PeerNic { kNone, kFabric, kVia };
PeerNic nic_of_endpoint(const std::string& endpoint);

// "remaps R evictions E", or "remaps unknown" if the process has no
// such NIC open.
std::string remaps_line(PeerNic nic);

}  // namespace clan::orbtest
