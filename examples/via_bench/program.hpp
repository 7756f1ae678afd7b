// The frame of each VIA benchmark program: options, the two processes and
// their set-up, the program's measurement, then the machine header, the
// program's tables and verdict rows on stdout and its CSV and JSON files.
// A program supplies only what is its own.
#pragma once

#include <string>
#include <vector>

#include "bench/table.hpp"
#include "bench/verdicts.hpp"
#include "via_bench/config.hpp"
#include "via_bench/driver.hpp"
#include "via_bench/options.hpp"
#include "via_bench/results.hpp"

namespace via_bench {

struct Program {
  const char* name;   // "bench_via_latency"
  const char* title;  // of the Markdown output
  const char* stem;   // the result files: <stem>.csv, <stem>.json
  Parts parts;
  bool cq_conns_option = false;
  std::vector<std::string> target_ids;

  void (*measure)(const Options& o, Driver& drv, Results& r);
  // The tables after the machine header.
  void (*print)(const Options& o, const Results& r);
  void (*verdicts)(const Results& r, bench::Verdicts& v);
  // The CSV rows, and the JSON file's members besides "benchmark",
  // "machine", "config" and "targets".
  bench::Table (*csv)(const Results& r);
  bench::Record (*json)(const Results& r);
  // The program's entries of "config".
  bench::Record (*config)(const Options& o);
};

// What the program linked with this library measures: each bench_via_*.cpp
// defines it, and main() (program_main.cpp) runs it.
extern const Program kProgram;

// Runs a VIA benchmark program: 0, or 1 if something failed to run (a
// missed target is not a failure).
int run(const Program& p, int argc, char** argv);

}  // namespace via_bench
