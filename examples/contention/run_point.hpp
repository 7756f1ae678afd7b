// Runs one point: forks the server and the clients, sets up their
// connections, opens the measured window and gathers the figures.
#pragma once

#include <string>
#include <vector>

#include "contention/protocol.hpp"

namespace contention {

struct Timing {
  int warm_ms = 500;     // from the start of the streams to the window
  int measure_ms = 2000; // the window
};

struct PointResult {
  PointSpec spec;
  std::vector<uint64_t> replies;  // per client, over the window
  uint64_t max_round_trip_ns = 0; // the longest of any client
  double seconds = 0;             // the window's length
  uint64_t remaps = 0, evictions = 0;
  std::string error;              // empty when the point succeeded
  std::vector<double> aggregates; // every repetition's (median_repetition)

  double client_rate(size_t i) const { return static_cast<double>(replies[i]) / seconds; }
  double aggregate() const;       // messages/s, every client
  double min_rate() const;
  double median_rate() const;
  double max_rate() const;
  double remaps_per_s() const { return static_cast<double>(remaps) / seconds; }
  double mb_s() const { return aggregate() * spec.size / 1e6; }
};

PointResult run_point(const PointSpec& spec, const Timing& t);
// Of one point's repetitions, the one with the median aggregate (the upper
// of two), carrying every repetition's aggregate; a failed one if any.
PointResult median_repetition(std::vector<PointResult> reps);

}  // namespace contention
