// giop:otp endpoint: the shared monitored endpoint, making omniTransport
// connections over datagram links.
#pragma once

#include "orb_transports/common/monitored_endpoint.hpp"

namespace clanorb {

class OtpEndpoint : public MonitoredEndpoint {
 public:
  OtpEndpoint(std::string node, uint16_t port) : MonitoredEndpoint("giop:otp", std::move(node), port) {}

 protected:
  omni::giopConnection* accept_one(clan::OobRequest& request) override;
};

}  // namespace clanorb
