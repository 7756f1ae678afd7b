// giop:via registers itself with omniORB when the library is linked.
#include "orb_transports/common/ior_component.hpp"
#include "orb_transports/common/node_transport_impl.hpp"
#include "orb_transports/common/plugin_glue.hpp"
#include "orb_transports/via/via_address.hpp"
#include "orb_transports/via/via_endpoint.hpp"
#include "orb_transports/via/via_nic.hpp"

namespace clanorb {
namespace {
NodeTransportImpl<ViaEndpoint, ViaAddress> the_via_transport("giop:via", "via", kViaIorTag);
[[maybe_unused]] const bool via_released_with_orb = (on_orb_destroy(&ViaNic::release), true);
// Its components publish where its own node listens, not the fabric's.
[[maybe_unused]] const bool via_reach_published = (publish_reach_with(kViaIorTag, &ViaNic::published_reach), true);
}  // namespace
}  // namespace clanorb

// Referenced by the registration anchors object (see giop:clan's).
extern "C" {
int clanorb_via_anchor = 0;
}
