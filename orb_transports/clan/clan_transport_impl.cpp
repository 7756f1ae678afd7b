#include "orb_transports/clan/clan_transport_impl.hpp"

#include <omniORB4/omniIOR.h>
#include <unistd.h>

#include "orb_transports/clan/clan_address.hpp"
#include "orb_transports/clan/clan_endpoint.hpp"
#include "orb_transports/common/plugin_glue.hpp"

OMNI_USING_NAMESPACE(omni)

namespace clanorb {

ClanTransportImpl::ClanTransportImpl() : giopTransportImpl("giop:clan") {
  register_transport("clan", kClanIorTag);
}

giopEndpoint* ClanTransportImpl::toEndpoint(const char* param) {
  std::string node;
  uint16_t port = 0;
  // "" or ":" -> this process's node, first free port; "node:port" otherwise.
  if (param && (!*param || !strcmp(param, ":"))) return new ClanEndpoint("", 0);
  if (!ClanAddress::parse(param, node, port, true)) return nullptr;
  return new ClanEndpoint(node, port);
}

giopAddress* ClanTransportImpl::toAddress(const char* param) {
  std::string node;
  uint16_t port = 0;
  if (!ClanAddress::parse(param, node, port, false)) return nullptr;
  return new ClanAddress(node, port);
}

CORBA::Boolean ClanTransportImpl::isValid(const char* param) {
  std::string node;
  uint16_t port = 0;
  return ClanAddress::parse(param, node, port, false);
}

CORBA::Boolean ClanTransportImpl::addToIOR(const char* param, IORPublish* eps) {
  if (!isValid(param)) return 0;
  publish_address(kClanIorTag, std::string("giop:clan:") + param);
  // An IOR needs an IIOP host even when only giop:clan is published; a tcp
  // endpoint published later replaces it.
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  IIOP::Address a;
  a.host = (const char*)host;
  a.port = 0;
  omniIOR::add_IIOP_ADDRESS(a, eps);
  return 1;
}

// The registration: constructed when the library's static objects are.
static ClanTransportImpl the_clan_transport;

}  // namespace clanorb

// Referenced through clanorb::transports' link options, so that linkers that
// drop unreferenced libraries (Debian's --as-needed) keep this one.
extern "C" {
int clanorb_clan_anchor = 0;
}
