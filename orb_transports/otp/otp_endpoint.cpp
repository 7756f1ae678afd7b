#include "orb_transports/otp/otp_endpoint.hpp"

#include "clan_emul/error_detail.hpp"
#include "orb_transports/otp/otp_connection.hpp"
#include "orb_transports/otp/otp_link_config.hpp"

namespace clanorb {

omni::giopConnection* OtpEndpoint::accept_one(clan::OobRequest& request) {
  const std::string client = request.peer_node();  // accepting takes the request
  // A client of another host comes over udp. So does one of this host that
  // named our node by its address for other hosts (NAME@HOST:PORT): it
  // could not know it is on our host, and both channels reach it.
  const bool across_hosts = !request.peer_on_this_host() ||
                            clan::DatagramLink::requested_channel(request) == clan::DatagramChannel::kUdp;
  auto link = clan::DatagramLink::accept(fabric()->nic(), request, otp_link_config(across_hosts));
  if (!link) {
    log_refusal(client, link.error());
    return nullptr;
  }
  std::string peer = "giop:otp:" + (*link)->oob().peer_node() + ":" + std::to_string((*link)->oob().id());
  return new OtpConnection(fabric(), std::move(link.value()), otp::Role::kServer, address(), peer, this);
}

}  // namespace clanorb
