#include "bench/targets.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "bench/session.hpp"

#ifndef CLANORB_TARGETS_FILE
#error "CLANORB_TARGETS_FILE: the build gives the path of examples/targets.tsv"
#endif

namespace bench {
namespace {

const char* const kHeader = "id\tbenchmark\top\tvalue\twhat";
const char* const kOps[] = {"<", "<=", ">", ">=", "=="};

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string field; std::getline(ss, field, '\t');) out.push_back(field);
  return out;
}

bool known_op(const std::string& op) {
  for (const char* k : kOps) {
    if (op == k) return true;
  }
  return false;
}

std::optional<double> parse_number(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || !end || *end || !std::isfinite(v)) return std::nullopt;
  return v;
}

// One data line; throws with `where` ("path:line") on a malformed one.
Target parse_line(const std::string& line, const std::string& where, int number) {
  const std::vector<std::string> f = split_tabs(line);
  if (f.size() != 5) {
    throw TargetError(where + ": expected 5 tab-separated fields (id benchmark op value what), found " +
                      std::to_string(f.size()));
  }
  if (f[0].empty() || f[1].empty() || f[4].empty()) throw TargetError(where + ": empty field");
  if (!known_op(f[2])) throw TargetError(where + ": unknown comparison '" + f[2] + "' (<, <=, >, >=, ==)");
  const std::optional<double> v = parse_number(f[3]);
  if (!v) throw TargetError(where + ": value '" + f[3] + "' is not a number");
  return Target{f[0], f[1], f[2], *v, f[4], number};
}

}  // namespace

bool Target::met(double measured) const {
  if (std::isnan(measured)) return false;
  if (op == "<") return measured < value;
  if (op == "<=") return measured <= value;
  if (op == ">") return measured > value;
  if (op == ">=") return measured >= value;
  return measured == value;
}

std::string Target::threshold() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s %g", op.c_str(), value);
  return buf;
}

TargetTable TargetTable::load(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw TargetError(path + ": cannot open the targets table");
  TargetTable t;
  t.path_ = path;
  bool header = false;
  int number = 0;
  for (std::string line; std::getline(f, line);) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    const std::string where = path + ":" + std::to_string(number);
    if (!header) {
      if (line != kHeader) throw TargetError(where + ": expected the header line 'id benchmark op value what'");
      header = true;
      continue;
    }
    Target target = parse_line(line, where, number);
    for (const Target& other : t.targets_) {
      if (other.id == target.id) {
        throw TargetError(where + ": id " + target.id + " already on line " + std::to_string(other.line));
      }
    }
    t.targets_.push_back(std::move(target));
  }
  if (!header) throw TargetError(path + ": no header line 'id benchmark op value what'");
  return t;
}

const Target& TargetTable::at(const std::string& id) const {
  for (const Target& t : targets_) {
    if (t.id == id) return t;
  }
  throw TargetError(path_ + ": no target " + id);
}

std::vector<const Target*> TargetTable::row(const std::string& row) const {
  std::vector<const Target*> out;
  for (const Target& t : targets_) {
    if (t.id == row || t.id.rfind(row + ".", 0) == 0) out.push_back(&t);
  }
  return out;
}

std::string targets_path() {
  const char* env = std::getenv("CLANORB_TARGETS");
  return env && *env ? env : CLANORB_TARGETS_FILE;
}

const TargetTable& targets() {
  static const TargetTable table = [] {
    try {
      return TargetTable::load(targets_path());
    } catch (const TargetError& e) {
      std::fprintf(stderr, "%s: %s\n", program_name(), e.what());
      std::exit(2);
    }
  }();
  return table;
}

void require_targets(const std::vector<std::string>& ids) {
  const TargetTable& t = targets();
  for (const std::string& id : ids) {
    try {
      (void)t.at(id);
    } catch (const TargetError& e) {
      std::fprintf(stderr, "%s: %s\n", program_name(), e.what());
      std::exit(2);
    }
  }
}

}  // namespace bench
