// bench_wire's client: connects to the server's control channel, makes a
// link of every wire asked for, then alternates the measurements (every
// wire, wait and size in each round, the same order every round) and
// prints and writes the results.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/options.hpp"
#include "wire_bench/sockets.hpp"

namespace wire_bench {

struct ClientOptions {
  bench::CommonOptions common;  // --quick, --out
  HostPort server;
  std::vector<size_t> wires;  // indices in wires()
  std::vector<uint32_t> sizes = {8, 256, 4096, 65536};
  uint64_t roundtrips = 20000;  // per wire, wait and size, over all alternations
  int alternations = 5;
  uint32_t stream_size = 65536;
  uint64_t stream_bytes = 256ull << 20;  // per wire and alternation
};

// The exit status: 0 when every measurement ran; 1, with the reason on
// stderr, otherwise.
int run_client(const ClientOptions& o);

}  // namespace wire_bench
