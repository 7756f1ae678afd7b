// bench_clan_wire's client: links to the server it finds in the
// rendezvous, then times round trips of each message size and streams of
// chunks, in each wait mode, alternated mode by mode every round.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/stats.hpp"
#include "clan_emul/wait_mode.hpp"

namespace clan_wire_bench {

struct ClientOptions {
  std::string rendezvous;  // the server's file
  std::string listen;      // IP the client's wire listens on; empty: the one that reaches the server
  int64_t spin_ns = -1;
  std::vector<clan::WaitMode> modes;
  std::vector<uint32_t> sizes;
  uint64_t roundtrips = 0;  // per mode and size, per round
  uint64_t warm = 0;
  uint32_t chunk = 0;       // stream write size
  uint32_t chunks = 0;      // per stream
  int rounds = 1;
};

struct PingCell {
  clan::WaitMode mode;
  uint32_t size;
  std::vector<uint64_t> all;  // round trips, ns
  std::vector<bench::Summary> per_round;
};

struct StreamCell {
  clan::WaitMode mode;
  std::vector<double> bytes_per_s;  // one per round
};

struct ClientResults {
  std::string server_address, client_address, provider;
  int64_t spin_ns = 0;
  std::vector<PingCell> ping;
  std::vector<StreamCell> stream;
};

// 0 and `out` filled, or the exit status of what failed.
int run_client(const ClientOptions& o, ClientResults& out);

}  // namespace clan_wire_bench
