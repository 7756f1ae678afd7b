// bench_wire's results: the header and Markdown tables on stdout, and with
// --out wire_latency.csv, wire_bandwidth.csv and wire.json (read by
// scripts/comparison/cross_host.py). Each wire is a row beside the others,
// with its ratio to the tcp socket's figure in the same run.
#pragma once

#include "wire_bench/client.hpp"
#include "wire_bench/results.hpp"

namespace wire_bench {

void print_wire_header(const ClientOptions& o, const WireResults& r);
void print_wire_tables(const WireResults& r);
// False (reported on stderr) if a file cannot be written.
bool write_wire_results(const ClientOptions& o, const WireResults& r);

}  // namespace wire_bench
