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

// Referenced by the registration anchors object (orb_transports/anchors/)
// that clanorb::transports and libclanorb_transports link into a program, so
// that the linker keeps this object from an archive, and this library when it
// is shared (Debian links with --as-needed).
extern "C" {
int clanorb_clan_anchor = 0;
}
