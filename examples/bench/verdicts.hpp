// A benchmark's verdict rows: each target of the table (targets.hpp) beside
// the value measured for it, MET or NOT MET. Printed as a Markdown table and
// written as the "targets" list of the result file. Targets are reported,
// never asserted.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "bench/table.hpp"
#include "bench/targets.hpp"

namespace bench {

// How a threshold is printed beside its measured value: 2 -> "2", "2x" or,
// for a share, 0.9 -> "90 %".
enum class Scale { kPlain, kRatio, kPercent };

class Verdicts {
 public:
  explicit Verdicts(const TargetTable& table = targets()) : table_(table) {}

  // One row for target `id`; `shown` is its "measured" cell (the value
  // itself if empty). Exits with status 2 on an id the table lacks.
  void add(const std::string& id, double measured, const std::string& shown = "", Scale scale = Scale::kPlain);
  // One row for the targets "row.<x>" together (targets.tsv's header):
  // MET only if each is. `measured` pairs each id with its value.
  void add_row(const std::string& row, const std::vector<std::pair<std::string, double>>& measured,
               const std::string& shown, Scale scale = Scale::kPlain);

  bool empty() const { return rows_.empty(); }
  bool all_met() const;
  // | figure | measured | target | status |
  Table table() const;
  // The "targets" list: one {"figure", "measured", "target", "met"} per id.
  std::string json(int indent = 4) const;

 private:
  struct Check {
    const Target* target;
    double measured;
  };
  struct Row {
    std::vector<Check> checks;
    std::string shown;
    Scale scale;
  };
  const Target& find(const std::string& id) const;

  const TargetTable& table_;
  std::vector<Row> rows_;
};

}  // namespace bench
