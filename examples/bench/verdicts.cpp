#include "bench/verdicts.hpp"

#include <cstdio>
#include <cstdlib>

#include "bench/format.hpp"
#include "bench/json.hpp"
#include "bench/session.hpp"

namespace bench {
namespace {

std::string threshold(const Target& t, Scale scale) {
  switch (scale) {
    case Scale::kRatio:
      return t.op + " " + fmt("%g", t.value) + "x";
    case Scale::kPercent:
      return t.op + " " + fmt("%g", 100 * t.value) + " %";
    case Scale::kPlain:
      break;
  }
  return t.threshold();
}

std::string joined(const std::vector<std::string>& parts) {
  std::string o;
  for (const std::string& p : parts) o += (o.empty() ? "" : "; ") + p;
  return o;
}

}  // namespace

const Target& Verdicts::find(const std::string& id) const {
  try {
    return table_.at(id);
  } catch (const TargetError& e) {
    std::fprintf(stderr, "%s: %s\n", program_name(), e.what());
    std::exit(2);
  }
}

void Verdicts::add(const std::string& id, double measured, const std::string& shown, Scale scale) {
  rows_.push_back(Row{{Check{&find(id), measured}}, shown.empty() ? fmt("%.3g", measured) : shown, scale});
}

void Verdicts::add_row(const std::string& row, const std::vector<std::pair<std::string, double>>& measured,
                       const std::string& shown, Scale scale) {
  Row r{{}, shown, scale};
  for (const auto& [id, value] : measured) r.checks.push_back(Check{&find(row + "." + id), value});
  rows_.push_back(std::move(r));
}

bool Verdicts::all_met() const {
  for (const Row& r : rows_) {
    for (const Check& c : r.checks) {
      if (!c.target->met(c.measured)) return false;
    }
  }
  return true;
}

Table Verdicts::table() const {
  Table t({{"figure", "", false}, {"measured", "", false}, {"target", "", false}, {"status", "", false}});
  for (const Row& r : rows_) {
    std::vector<std::string> what, thresholds;
    bool met = true;
    for (const Check& c : r.checks) {
      what.push_back(c.target->what);
      thresholds.push_back(threshold(*c.target, r.scale));
      met = met && c.target->met(c.measured);
    }
    t.add({joined(what), r.shown, joined(thresholds), bench::met(met)});
  }
  return t;
}

std::string Verdicts::json(int indent) const {
  Table t({{"figure"}, {"measured"}, {"target"}, {"met"}});
  for (const Row& r : rows_) {
    for (const Check& c : r.checks) {
      t.add({c.target->id, Value(c.measured), c.target->threshold(), Value::boolean(c.target->met(c.measured))});
    }
  }
  return t.json(indent);
}

}  // namespace bench
