// The one way clanorb reads a number a user gives (an ORB option, an
// environment variable): decimal digits and nothing else. No sign, no blanks,
// no hexadecimal or exponent, no trailing characters: strtoul turns "-5" into
// 4294967291 and "abc" into 0 without a word, which is what this refuses.
#pragma once

#include <cstdint>
#include <string_view>

namespace clan {

enum class ValueProblem { kNone, kEmpty, kNegative, kNotDecimal, kTooLarge };

struct ParsedValue {
  uint64_t value = 0;
  ValueProblem problem = ValueProblem::kNone;
};

// `text` as a decimal integer; kTooLarge beyond 2^64-1.
ParsedValue parse_decimal(std::string_view text);

// What is wrong, for a message: "is negative", "is not a decimal integer"...
const char* describe(ValueProblem problem);

}  // namespace clan
