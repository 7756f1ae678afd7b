// giop:clan address, "giop:clan:<node>:<port>". Connect sets up a
// DmqConnection over the node's out-of-band connection manager.
#pragma once

#include "orb_transports/common/node_address.hpp"

namespace clanorb {

class ClanAddress : public NodeAddress {
 public:
  ClanAddress(std::string node, uint16_t port) : NodeAddress("giop:clan", std::move(node), port) {}
  omni::giopActiveConnection* Connect(const omni_time_t& deadline, CORBA::ULong strand_flags,
                                      CORBA::Boolean& timed_out) const override;
  omni::giopAddress* duplicate() const override { return new ClanAddress(node_, port_); }
};

}  // namespace clanorb
