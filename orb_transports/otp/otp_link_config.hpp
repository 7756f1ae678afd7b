// The datagram link a giop:otp connection runs over, from the ORB options.
#pragma once

#include "clan_emul/datagram_link.hpp"

namespace clanorb {

clan::DatagramLink::Config otp_link_config();

}  // namespace clanorb
