// What bench_wire's client measures: per wire, wait and message size, the
// round trips of every alternation, and the bandwidth of every alternation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/machine.hpp"
#include "bench/stats.hpp"
#include "wire_bench/wire.hpp"

namespace wire_bench {

struct LatencyCell {
  size_t wire = 0;  // index in wires()
  Wait wait = Wait::kBlocking;
  uint32_t size = 0;
  std::vector<uint64_t> all;              // every timed round trip, ns
  std::vector<bench::Summary> per_round;  // one per alternation
};

struct BandwidthCell {
  size_t wire = 0;
  Wait wait = Wait::kBlocking;
  uint32_t size = 0;
  uint64_t bytes_per_round = 0;
  std::vector<double> per_round;  // bytes per second
};

struct WireResults {
  bench::MachineInfo machine;
  double clock_ns = 0;
  std::string server;  // HOST:PORT of the control channel
  int alternations = 0;
  uint64_t block = 0, warm = 0;  // round trips per cell and alternation, and warm-up
  bool quick = false;
  std::vector<LatencyCell> latency;
  std::vector<BandwidthCell> bandwidth;
};

}  // namespace wire_bench
