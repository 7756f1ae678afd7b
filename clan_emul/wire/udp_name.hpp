// The name of a udp endpoint as it travels between peers: the sockaddr
// fi_getname gives (FI_SOCKADDR_IN or FI_SOCKADDR_IN6). A name from the
// peer is checked before it reaches the address vector: its length fits its
// family, the family is ours, the port is set and the address is one a
// datagram can be sent to (not the unspecified address).
#pragma once

#include <cstddef>
#include <string>

#include "clan_emul/error.hpp"

namespace clan::wire {

// AF_INET or AF_INET6 for a well-formed name of exactly its family's size,
// else -1.
int udp_name_family(const std::byte* name, size_t len);

// kOk, or kCorrupt with words on this thread saying what is wrong.
Errc check_udp_name(const std::byte* name, size_t len, int our_family);

// "192.0.2.1:4711" or "[fe80::1]:4711", for messages ("?" if malformed).
std::string udp_name_text(const std::byte* name, size_t len);

}  // namespace clan::wire
