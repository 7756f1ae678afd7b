// bench_wire's server: it listens, prints "listening HOST:PORT" as its first
// line of output, takes one client's control connection and carries out its
// commands on the wires until told to quit.
#pragma once

#include "wire_bench/sockets.hpp"

namespace wire_bench {

struct ServerOptions {
  HostPort listen;          // the control channel's address; each wire binds to its host
  int accept_seconds = 60;  // no client within this time is an error
};

// The exit status: 0 after the client's quit; non-zero, with the reason on
// stderr, if anything failed.
int run_server(const ServerOptions& o);

}  // namespace wire_bench
