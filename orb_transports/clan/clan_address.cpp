#include "orb_transports/clan/clan_address.hpp"

#include "clan_emul/dmq_connection.hpp"
#include "clan_emul/error_detail.hpp"
#include "orb_transports/clan/clan_active.hpp"
#include "orb_transports/clan/clan_connection.hpp"
#include "orb_transports/clan/clan_endpoint.hpp"
#include "orb_transports/common/fabric.hpp"
#include "orb_transports/common/omni_time.hpp"
#include "orb_transports/common/plugin_glue.hpp"

OMNI_USING_NAMESPACE(omni)

namespace clanorb {

giopActiveConnection* ClanAddress::Connect(const omni_time_t& deadline, CORBA::ULong,
                                           CORBA::Boolean& timed_out) const {
  timed_out = 0;
  auto fabric = Fabric::get("giop:clan");
  if (!fabric) return nullptr;
  const clan::DmqConfig ring = clan_ring_config();
  // No deadline from omniORB: still bound the connect, as tcp's does.
  clan::Deadline d = deadline ? to_deadline(deadline) : clan::Deadline::after(std::chrono::seconds(30));
  auto dmq = clan::DmqConnection::connect(fabric->nic(), fabric->oob(), node_, port_, ring, d);
  if (!dmq) {
    timed_out = dmq.error() == clan::Errc::kTimeout;
    if (omniORB::trace(kFallbackTraceLevel))
      log_fallback("cannot connect to " + address_ + ": " + clan::error_message(dmq.error()));
    return nullptr;
  }
  std::string mine = "giop:clan:" + fabric->node() + ":0";
  return new ClanActiveConnection(fabric, std::move(dmq.value()), mine, address_, nullptr);
}

}  // namespace clanorb
