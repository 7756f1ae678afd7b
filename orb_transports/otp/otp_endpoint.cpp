#include "orb_transports/otp/otp_endpoint.hpp"

#include "clan_emul/error_detail.hpp"
#include "orb_transports/otp/otp_connection.hpp"
#include "orb_transports/otp/otp_link_config.hpp"

namespace clanorb {

omni::giopConnection* OtpEndpoint::accept_one(clan::OobRequest& request) {
  const std::string client = request.peer_node();  // accepting takes the request
  auto link = clan::DatagramLink::accept(fabric()->nic(), request, otp_link_config());
  if (!link) {
    log_refusal(client, link.error());
    return nullptr;
  }
  std::string peer = "giop:otp:" + (*link)->oob().peer_node() + ":" + std::to_string((*link)->oob().id());
  return new OtpConnection(fabric(), std::move(link.value()), otp::Role::kServer, address(), peer, this);
}

}  // namespace clanorb
