// bench_clan_wire's results: the header, the round-trip and stream tables
// (Markdown on stdout), and with --out, clan_wire_pingpong.csv,
// clan_wire_stream.csv and clan_wire.json. The rows name their transport
// ("clan wire") so that a runner can set them beside other transports'
// ping-pongs measured the same way (round trips timed by the client,
// p50/p90/p99 in microseconds, streams in GB/s).
#pragma once

#include "bench/machine.hpp"
#include "bench/options.hpp"
#include "clan_wire_bench/client.hpp"

namespace clan_wire_bench {

struct RunInfo {
  bench::MachineInfo machine;
  double clock_ns = 0;
  std::string topology;  // "loopback (forked server)" or "two programs"
};

void print_wire_header(const bench::CommonOptions& o, const ClientOptions& c, const RunInfo& info,
                       const ClientResults& r);
void print_wire_tables(const ClientResults& r, const ClientOptions& o);
bool write_wire_results(const bench::CommonOptions& o, const ClientOptions& c, const RunInfo& info,
                        const ClientResults& r);

}  // namespace clan_wire_bench
