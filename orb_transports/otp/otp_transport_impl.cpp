// giop:otp registers itself with omniORB when the library is linked.
#include "orb_transports/common/ior_component.hpp"
#include "orb_transports/common/node_transport_impl.hpp"
#include "orb_transports/otp/otp_address.hpp"
#include "orb_transports/otp/otp_endpoint.hpp"

namespace clanorb {
namespace {
NodeTransportImpl<OtpEndpoint, OtpAddress> the_otp_transport("giop:otp", "otp", kOtpIorTag);
}  // namespace
}  // namespace clanorb

// Referenced by the registration anchors object (see giop:clan's).
extern "C" {
int clanorb_otp_anchor = 0;
}
