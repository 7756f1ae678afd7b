#include "orb_transports/clan/clan_address.hpp"

#include <cstdlib>

#include "clan_emul/dmq_connection.hpp"
#include "orb_transports/clan/clan_active.hpp"
#include "orb_transports/clan/clan_connection.hpp"
#include "orb_transports/common/fabric.hpp"
#include "orb_transports/common/omni_time.hpp"

OMNI_USING_NAMESPACE(omni)

namespace clanorb {

ClanAddress::ClanAddress(std::string node, uint16_t port)
    : node_(std::move(node)), port_(port), address_("giop:clan:" + node_ + ":" + std::to_string(port)) {}

bool ClanAddress::parse(const char* param, std::string& node, uint16_t& port, bool allow_empty) {
  if (!param) return false;
  const std::string s = param;
  const size_t colon = s.rfind(':');
  if (colon == std::string::npos) return false;
  node = s.substr(0, colon);
  const std::string p = s.substr(colon + 1);
  for (char ch : node) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                    ch == '.' || ch == '_' || ch == '-';
    if (!ok) return false;
  }
  if (node.size() > 64 || (node.empty() && !allow_empty)) return false;
  if (p.empty()) {
    port = 0;
    return allow_empty;
  }
  if (p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) return false;
  const unsigned long v = std::strtoul(p.c_str(), nullptr, 10);
  if (v > 65535 || (v == 0 && !allow_empty)) return false;
  port = static_cast<uint16_t>(v);
  return true;
}

giopActiveConnection* ClanAddress::Connect(const omni_time_t& deadline, CORBA::ULong,
                                           CORBA::Boolean& timed_out) const {
  timed_out = 0;
  auto fabric = Fabric::get();
  if (!fabric) return nullptr;
  const clan::DmqConfig ring = clan_ring_config();
  // No deadline from omniORB: still bound the connect, as tcp's does.
  clan::Deadline d = deadline ? to_deadline(deadline) : clan::Deadline::after(std::chrono::seconds(30));
  auto dmq = clan::DmqConnection::connect(fabric->nic(), fabric->oob(), node_, port_, ring, d);
  if (!dmq) {
    timed_out = dmq.error() == clan::Errc::kTimeout;
    if (omniORB::trace(25)) {
      omniORB::logger l;
      l << "giop:clan: connect to " << address_.c_str() << " failed: "
        << clan::to_string(dmq.error()) << "\n";
    }
    return nullptr;
  }
  std::string mine = "giop:clan:" + fabric->node() + ":0";
  return new ClanActiveConnection(fabric, std::move(dmq.value()), mine, address_, nullptr);
}

}  // namespace clanorb
