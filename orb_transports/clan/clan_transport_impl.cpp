// giop:clan registers itself with omniORB when the library is linked.
#include "orb_transports/clan/clan_address.hpp"
#include "orb_transports/clan/clan_endpoint.hpp"
#include "orb_transports/common/ior_component.hpp"
#include "orb_transports/common/node_transport_impl.hpp"

namespace clanorb {
namespace {
NodeTransportImpl<ClanEndpoint, ClanAddress> the_clan_transport("giop:clan", "clan", kClanIorTag);
}  // namespace
}  // namespace clanorb

// Referenced through clanorb::transports' link options, so that linkers that
// drop unreferenced libraries (Debian's --as-needed) keep this one.
extern "C" {
int clanorb_clan_anchor = 0;
}
