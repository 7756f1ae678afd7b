// Addresses of clanorb's transports: "giop:<name>:<node>:<port>", a listener
// on an emulated CLAN node of this host. Each transport derives its address
// class and adds Connect.
#pragma once

#include <string>

#include <omniORB4/CORBA.h>
#include <omniORB4/giopEndpoint.h>

namespace clanorb {

// Parses "<node>:<port>"; with allow_empty, an empty node or port (endpoint
// syntax: this process's node, first free port) is accepted as "" / 0.
// With allow_remote, the node may be "NAME@HOST:PORT", a node of another
// host (the addresses of a transport that crosses hosts, tag_crosses_hosts). When it fails, `reason` (if given)
// says what is wrong, for the user.
bool parse_node_address(const char* param, std::string& node, uint16_t& port, bool allow_empty,
                        std::string* reason = nullptr, bool allow_remote = false);

// Logs, at omniORB trace level `level`, "<scheme>: bad <what> '<scheme>:<param>':
// <reason>; expected <scheme>:<syntax>".
void log_bad_node_address(int level, const char* what, const char* scheme, const char* param,
                          const std::string& reason, const char* syntax);

class NodeAddress : public omni::giopAddress {
 public:
  // `scheme` is a string literal like "giop:clan".
  NodeAddress(const char* scheme, std::string node, uint16_t port);
  const char* type() const override { return scheme_; }
  const char* address() const override { return address_.c_str(); }
  const char* host() const override { return nullptr; }  // not an IP transport
  omni::giopAddress* duplicate(const char*) const override { return duplicate(); }
  using omni::giopAddress::duplicate;

 protected:
  const char* scheme_;
  std::string node_;
  uint16_t port_;
  std::string address_;
};

}  // namespace clanorb
