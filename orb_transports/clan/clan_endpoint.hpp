// giop:clan endpoint: the shared monitored endpoint, making DMQ connections.
#pragma once

#include "orb_transports/common/monitored_endpoint.hpp"

namespace clanorb {

class ClanEndpoint : public MonitoredEndpoint {
 public:
  ClanEndpoint(std::string node, uint16_t port) : MonitoredEndpoint("giop:clan", std::move(node), port) {}

 protected:
  omni::giopConnection* accept_one(clan::OobRequest& request) override;
};

}  // namespace clanorb
