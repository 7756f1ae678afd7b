// giop:clan address, "giop:clan:<node>:<port>": a listener on an emulated
// CLAN node of this host. Connect sets up a DmqConnection over the node's
// out-of-band connection manager.
#pragma once

#include <string>

#include <omniORB4/CORBA.h>
#include <omniORB4/giopEndpoint.h>

namespace clanorb {

class ClanAddress : public omni::giopAddress {
 public:
  ClanAddress(std::string node, uint16_t port);
  // Parses "<node>:<port>"; false if malformed.
  static bool parse(const char* param, std::string& node, uint16_t& port, bool allow_empty);

  const char* type() const override { return "giop:clan"; }
  const char* address() const override { return address_.c_str(); }
  const char* host() const override { return nullptr; }  // not an IP transport
  omni::giopActiveConnection* Connect(const omni_time_t& deadline, CORBA::ULong strand_flags,
                                      CORBA::Boolean& timed_out) const override;
  omni::giopAddress* duplicate() const override { return new ClanAddress(node_, port_); }
  omni::giopAddress* duplicate(const char*) const override { return duplicate(); }

 private:
  std::string node_;
  uint16_t port_;
  std::string address_;
};

}  // namespace clanorb
