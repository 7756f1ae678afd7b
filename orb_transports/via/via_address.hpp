// giop:via address, "giop:via:<node>:<port>": the VIA node (VipOpenNic's
// device name) and the discriminator (the port in decimal). Connect makes a
// VI and connects it with VipConnectRequest.
#pragma once

#include "orb_transports/common/node_address.hpp"

namespace clanorb {

class ViaAddress : public NodeAddress {
 public:
  ViaAddress(std::string node, uint16_t port) : NodeAddress("giop:via", std::move(node), port) {}
  omni::giopActiveConnection* Connect(const omni_time_t& deadline, CORBA::ULong strand_flags,
                                      CORBA::Boolean& timed_out) const override;
  omni::giopAddress* duplicate() const override { return new ViaAddress(node_, port_); }
};

}  // namespace clanorb
