// bench_contention's results: the tables (Markdown), the verdicts against
// examples/targets.tsv, and the CSV and JSON files.
#pragma once

#include <string>
#include <vector>

#include "bench/machine.hpp"
#include "contention/run_point.hpp"

namespace contention {

// The target ids in examples/targets.tsv.
extern const char* const kOvercommitTarget;  // MT 64 clients: 8 frames / 96 frames
extern const char* const kFairnessTarget;    // MT 8 frames: min client / fair share
extern const char* const kFixedTarget;       // MT 96 frames / fixed resources
std::vector<std::string> target_ids();

struct Verdict {
  std::string target;  // id
  uint32_t size;
  clan::Replacement replacement;
  double measured;     // NaN when the points it needs were not measured
  std::string detail;
  bool met() const;
};
std::vector<Verdict> verdicts(const std::vector<PointResult>& pts);

void print_tables(const bench::MachineInfo& m, const Timing& t, int64_t spin_ns, const std::string& spin_source,
                  const std::vector<PointResult>& pts);
bool write_outputs(const std::string& dir, const bench::MachineInfo& m, const Timing& t,
                   const std::vector<PointResult>& pts);

}  // namespace contention
