// giop:otp address, "giop:otp:<node>:<port>", the node a name of this host
// or NAME@HOST:PORT of another. Connect sets up a datagram link over the
// node's out-of-band connection manager (shared memory on this host, udp to
// another) and runs omniTransport over it.
#pragma once

#include "orb_transports/common/node_address.hpp"

namespace clanorb {

class OtpAddress : public NodeAddress {
 public:
  OtpAddress(std::string node, uint16_t port) : NodeAddress("giop:otp", std::move(node), port) {}
  omni::giopActiveConnection* Connect(const omni_time_t& deadline, CORBA::ULong strand_flags,
                                      CORBA::Boolean& timed_out) const override;
  omni::giopAddress* duplicate() const override { return new OtpAddress(node_, port_); }
};

}  // namespace clanorb
