// A wire address, "host:port" or "host": checked and split for
// fi_getinfo's node and service.
#pragma once

#include <cstdint>
#include <string>

#include "clan_emul/error.hpp"

namespace clan::wire {

struct WireAddress {
  std::string host;
  uint16_t port = 0;  // 0: any free port (listening only)
  std::string service() const { return std::to_string(port); }
  std::string text() const { return host + ":" + std::to_string(port); }
};

// kInvalidArgument, with the text in the words, for an empty host, a host
// of more than 253 characters or with characters no host name or IPv4
// address has, or a port that is not 0-65535 in decimal.
Result<WireAddress> parse_wire_address(const std::string& text);

}  // namespace clan::wire
