// The datagram link a giop:otp connection runs over, from the ORB options.
#pragma once

#include <string>

#include "clan_emul/datagram_link.hpp"

namespace clanorb {

// On this host (`across_hosts` false): the shared-memory channel with
// frames of 9 KiB, AAL5's MTU for IP (paper 002 sect. 3). To or from a node
// of another host: libfabric's udp provider, bound at this process's
// -ORBclanHost, with frames that fill at most one UDP datagram. Both ends
// derive the link alike from the same options, since a link refuses a peer
// whose mtu, ring or window differ: the window is -ORBotpWindow either way,
// the ring (and over udp the posted buffers) hold a whole window of full
// frames plus control frames, and the fault model applies to what this
// process sends, over either channel.
clan::DatagramLink::Config otp_link_config(bool across_hosts);

// The numeric IPv4 address a udp channel binds for `host` (-ORBclanHost,
// an address or a host name): `host` itself if it is numeric, else its
// first IPv4 address; empty if it has none.
std::string udp_bind_address(const std::string& host);

}  // namespace clanorb
