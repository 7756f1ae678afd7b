// A client process of one point: connects to the server, then sends a
// continuous stream of requests (one outstanding) until the window ends,
// counting the replies that arrive within it.
#pragma once

#include "bench/channel.hpp"
#include "contention/protocol.hpp"

namespace contention {

int run_client(const PointSpec& spec, uint32_t client, bench::Channel ctl);

}  // namespace contention
