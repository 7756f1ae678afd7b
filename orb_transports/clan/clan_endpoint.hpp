// giop:clan endpoint: the shared monitored endpoint, making DMQ connections.
#pragma once

#include "clan_emul/dmq_layout.hpp"
#include "orb_transports/common/monitored_endpoint.hpp"

namespace clanorb {

class ClanEndpoint : public MonitoredEndpoint {
 public:
  ClanEndpoint(std::string node, uint16_t port) : MonitoredEndpoint("giop:clan", std::move(node), port) {}

 protected:
  omni::giopConnection* accept_one(clan::OobRequest& request) override;
};

// The ring a giop:clan connection receives into (-ORBclanRingBytes), on
// either side.
clan::DmqConfig clan_ring_config();

}  // namespace clanorb
