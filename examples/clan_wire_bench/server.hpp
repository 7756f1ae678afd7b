// bench_clan_wire's server: answers every bell the client rings, in the
// wait mode the client asks for, until told to quit.
#pragma once

#include <cstdint>
#include <string>

namespace clan_wire_bench {

struct ServerOptions {
  std::string listen = "127.0.0.1";  // IP (and port) the wire listens on
  std::string rendezvous;            // file for the client; empty: stdout only
  int64_t spin_ns = -1;
  bool announce = true;  // print the rendezvous line on stdout
};

// The exit status: 0 once the client said quit.
int run_server(const ServerOptions& o);

}  // namespace clan_wire_bench
