#include "orb_transports/via/via_address.hpp"

#include <memory>

#include "clan_emul/error_detail.hpp"
#include "orb_transports/common/omni_time.hpp"
#include "orb_transports/common/plugin_glue.hpp"
#include "orb_transports/via/via_active.hpp"

OMNI_USING_NAMESPACE(omni)

namespace clanorb {

giopActiveConnection* ViaAddress::Connect(const omni_time_t& deadline, CORBA::ULong,
                                          CORBA::Boolean& timed_out) const {
  timed_out = 0;
  // A node of another host, "NAME@HOST:PORT", is VIPL's host address whole.
  if (node_.size() > VIP_CLAN_MAX_HOST_ADDRESS) {
    if (omniORB::trace(kFallbackTraceLevel))
      log_fallback("cannot connect to " + address_ + ": its node is " + std::to_string(node_.size()) +
                   " characters, above VIPL's " + std::to_string(VIP_CLAN_MAX_HOST_ADDRESS));
    return nullptr;
  }
  auto nic = ViaNic::get();
  if (!nic) return nullptr;
  auto c = std::make_unique<ViaActiveConnection>(nic);
  if (!c->open()) return nullptr;
  // No deadline from omniORB: still bound the connect, as tcp's does.
  int ms = deadline ? to_deadline(deadline).remaining_ms() : 30'000;
  ViaNetAddress local(nic->node(), 0);
  ViaNetAddress remote(node_, port_);
  VIP_VI_ATTRIBUTES peer{};
  clan::clear_error();
  VIP_RETURN r = VipConnectRequest(c->vi(), local.get(), remote.get(), static_cast<VIP_ULONG>(ms), &peer);
  if (r != VIP_SUCCESS) {
    timed_out = r == VIP_TIMEOUT;
    if (omniORB::trace(kFallbackTraceLevel))
      log_fallback("cannot connect to " + address_ + ": " + via_failure(r));
    return nullptr;
  }
  if (!c->post_receives()) return nullptr;
  c->set_addresses("giop:via:" + nic->node() + ":0", address_);
  return c.release();
}

}  // namespace clanorb
