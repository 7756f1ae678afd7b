// The benchmarks' targets, read from one table (examples/targets.tsv, whose
// header comment gives the format): each line an id, the benchmark that
// measures it, a comparison and a threshold, and the target in words.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace bench {

// A malformed line or an unknown id; what() names the file (and the line).
class TargetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Target {
  std::string id;
  std::string benchmark;
  std::string op;  // <, <=, >, >=, ==
  double value = 0;
  std::string what;
  int line = 0;

  // "measured op value"; false for a value not measured (NaN).
  bool met(double measured) const;
  // "<= 2", ">= 0.9": the threshold as printed.
  std::string threshold() const;
};

class TargetTable {
 public:
  // Reads the file; throws TargetError "path:line: why".
  static TargetTable load(const std::string& path);

  const std::string& path() const { return path_; }
  const std::vector<Target>& all() const { return targets_; }
  // Throws TargetError "path: no target ID" for an unknown id.
  const Target& at(const std::string& id) const;
  bool met(const std::string& id, double measured) const { return at(id).met(measured); }
  // The lines of one verdict row: the id `row` itself, or every "row.<x>".
  std::vector<const Target*> row(const std::string& row) const;

 private:
  std::string path_;
  std::vector<Target> targets_;
};

// The table's file: $CLANORB_TARGETS, else the source tree's
// examples/targets.tsv.
std::string targets_path();

// The table in force, loaded once. On a malformed file prints the error and
// exits with status 2.
const TargetTable& targets();

// Checks at start-up that every id a program reports is in the table, so a
// misspelt id fails before the measurement; exits with status 2 if not.
void require_targets(const std::vector<std::string>& ids);

}  // namespace bench
