// The server process of one point: accepts every client, serves requests
// the way the point's configuration says (OneVN, ST, MT or fixed), and
// reports its NIC's re-mappings over the measured window.
#pragma once

#include "bench/channel.hpp"
#include "contention/protocol.hpp"

namespace contention {

// The forked server's body; its exit code (0 when every client was served
// to its close).
int run_server(const PointSpec& spec, bench::Channel ctl);

}  // namespace contention
