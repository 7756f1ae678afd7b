#include "clan_emul/decimal.hpp"

#include <limits>

namespace clan {

ParsedValue parse_decimal(std::string_view text) {
  if (text.empty()) return {0, ValueProblem::kEmpty};
  if (text.front() == '-') return {0, ValueProblem::kNegative};
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  uint64_t v = 0;
  bool too_large = false;
  for (char c : text) {
    if (c < '0' || c > '9') return {0, ValueProblem::kNotDecimal};
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (v > (kMax - digit) / 10) too_large = true;
    v = v * 10 + digit;
  }
  // Every character is read first: "99999999999999999999x" is not a number.
  return too_large ? ParsedValue{0, ValueProblem::kTooLarge} : ParsedValue{v, ValueProblem::kNone};
}

const char* describe(ValueProblem problem) {
  switch (problem) {
    case ValueProblem::kNone: return "is valid";
    case ValueProblem::kEmpty: return "is empty";
    case ValueProblem::kNegative: return "is negative";
    case ValueProblem::kNotDecimal: return "is not a decimal integer";
    case ValueProblem::kTooLarge: return "is too large";
  }
  return "is invalid";
}

}  // namespace clan
