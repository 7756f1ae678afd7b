// Where a node is: a name in this runtime directory ("NAME", reached over
// ipc), or a node of any host at a tcp address ("NAME@HOST[:PORT]"), and the
// address a node listens on ("HOST[:PORT]"). Parsing checks the whole text
// and says in words what is wrong; hosts are resolved to numeric addresses
// here, so that a peer's record is keyed by the address its frames come
// from. Not part of the public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "clan_emul/error.hpp"

namespace clan::oob_detail {

// The tcp port of "HOST" without ":PORT", to listen on and to connect to.
inline constexpr uint16_t kDefaultOobPort = 7460;
// A DNS name's limit (RFC 1035): 253 characters, labels of 1 to 63.
inline constexpr std::size_t kMaxHostName = 253;

// A peer node: a name, and for a node reached over tcp its numeric address.
struct PeerAddress {
  std::string name;
  std::string host;  // empty: this runtime directory; else dotted IPv4 or bracketed IPv6
  uint16_t port = 0;

  bool remote() const { return !host.empty(); }
  std::string host_port() const { return host + ":" + std::to_string(port); }
  // What the peer table keys its record by: two hosts may both run a node
  // of the same name, but not at the same address.
  std::string key() const { return remote() ? name + "@" + host_port() : name; }
};

// "NAME" or "NAME@HOST[:PORT]": the name as valid_node_name() wants it;
// HOST a dotted IPv4, a bracketed IPv6 or a DNS name (resolved here); PORT
// 1 to 65535, kDefaultOobPort when left out. kInvalidArgument in words for
// a bad text or a name that does not resolve, kSystem if resolving fails
// otherwise.
Errc parse_peer_address(std::string_view text, PeerAddress& out);

// "HOST[:PORT]" to listen on: HOST as above or '*' (every interface); PORT
// 0 to 65535, 0 picks a free one, kDefaultOobPort when left out. Fills
// `host` with the numeric address (or '*') ZeroMQ binds.
Errc parse_listen_address(std::string_view text, std::string& host, uint16_t& port);

// The numeric form PeerAddress uses for an address ZeroMQ reports as a
// message's Peer-Address: IPv6 bracketed, IPv4-mapped IPv6 as IPv4; empty
// if it is not a numeric address.
std::string canonical_ip(std::string_view ip);

}  // namespace clan::oob_detail
