// The server peer's NIC re-mappings (peer_nic_stats.hpp). The NIC is the one
// the running ORB's transports opened; asking for it again only takes a
// reference.
#include "orb/peer_nic_stats.hpp"

#include <cstdint>
#include <string>

#include "clan_emul/nic.hpp"
#include "clan_emul/resident_set.hpp"
#include "orb_transports/common/fabric.hpp"
#include "orb_transports/via/via_nic.hpp"

namespace clan::orbtest {

PeerNic nic_of_endpoint(const std::string& endpoint) {
  if (endpoint.rfind("giop:via", 0) == 0) return PeerNic::kVia;
  if (endpoint.rfind("giop:clan", 0) == 0 || endpoint.rfind("giop:otp", 0) == 0) {
    return PeerNic::kFabric;
  }
  return PeerNic::kNone;
}

namespace {

std::string line(uint64_t remaps, uint64_t evictions) {
  return "remaps " + std::to_string(remaps) + " evictions " + std::to_string(evictions);
}

}  // namespace

std::string remaps_line(PeerNic nic) {
  if (nic == PeerNic::kFabric) {
    if (auto f = clanorb::Fabric::get("giop:clan")) {
      const ResidentSetStats s = f->nic().resident_set_stats();
      return line(s.remaps, s.evictions);
    }
  } else if (nic == PeerNic::kVia) {
    if (auto n = clanorb::ViaNic::get()) {
      VIP_CLAN_NIC_STATS s{};
      if (VipClanQueryNicStats(n->handle(), &s) == VIP_SUCCESS) return line(s.Remaps, s.Evictions);
    }
  }
  return "remaps unknown";
}

}  // namespace clan::orbtest
