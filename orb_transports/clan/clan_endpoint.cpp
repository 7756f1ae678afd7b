#include "orb_transports/clan/clan_endpoint.hpp"

#include "clan_emul/dmq_connection.hpp"
#include "clan_emul/error_detail.hpp"
#include "orb_transports/clan/clan_connection.hpp"

namespace clanorb {

clan::DmqConfig clan_ring_config() {
  clan::DmqConfig c;
  c.ring_bytes = fabric_options().ring_bytes;
  c.max_message = 64 * 1024;
  if (!clan::dmq::valid(c)) c = clan::DmqConfig{};
  return c;
}

omni::giopConnection* ClanEndpoint::accept_one(clan::OobRequest& request) {
  const std::string client = request.peer_node();  // accepting takes the request
  auto dmq = clan::DmqConnection::accept(fabric()->nic(), request, clan_ring_config());
  if (!dmq) {
    log_refusal(client, dmq.error());
    return nullptr;
  }
  std::string peer = "giop:clan:" + (*dmq)->oob().peer_node() + ":" + std::to_string((*dmq)->oob().id());
  return new ClanConnection(fabric(), std::move(dmq.value()), address(), peer, this);
}

}  // namespace clanorb
