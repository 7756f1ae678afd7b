// orb_test_peer's ttcp client mode (orb_test_peer_ttcp.cpp).
#pragma once

#include <omniORB4/CORBA.h>

namespace clan::orbtest {

// `orb_test_peer ttcp ...` (argv[1] is "ttcp"); an exit code of protocol.hpp.
int run_ttcp_client(CORBA::ORB_ptr orb, int argc, char** argv);

}  // namespace clan::orbtest
