// clanorb's ORB options, each described once: name, the transports it
// affects, its range and what it does. ORB_init's checks, omniORB's usage
// text and the README's options table are all made from this table; the
// defaults are FabricOptions' own.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "orb_transports/common/fabric.hpp"

namespace clanorb {

struct OrbOptionSpec {
  const char* key;         // "clanSpinNs": -ORBclanSpinNs, or clanSpinNs = n in a config file
  const char* transports;  // "giop:clan, giop:otp"
  const char* unit;        // "ns"; "" for a plain number
  uint64_t min;
  uint64_t max;
  bool power_of_two;
  // Another option whose value this one's adds to, the sum at most `max`.
  const char* shares_max_with;
  const char* what;
  uint64_t (*get)(const FabricOptions&);
  void (*set)(FabricOptions&, uint64_t);
  // An enumerated option: its values' names, by number, ending in a null;
  // the value is given by name. Null for a number.
  const char* const* names = nullptr;
};

std::span<const OrbOptionSpec> orb_option_table();

// An option whose value is text: a host address, a provider's name.
struct OrbTextOptionSpec {
  const char* key;
  const char* transports;
  const char* accepted;  // for the table and messages: "an IPv4 address or host name"
  const char* what;
  std::string FabricOptions::*field;
  // What is wrong with the text ("" if nothing).
  std::string (*problem)(const char* text);
};
std::span<const OrbTextOptionSpec> orb_text_option_table();
const OrbOptionSpec* find_orb_option(const char* key);

// "0 .. 1000000000 ns", "a power of two from 262144 to 1073741824 bytes",
// "random or lru".
std::string accepted_range(const OrbOptionSpec& spec);
// The value as given: its name for an enumerated option, else its digits.
std::string value_text(const OrbOptionSpec& spec, uint64_t value);
// What is wrong with `text` as this option's value (with the accepted
// range), or nullopt and the value.
std::optional<std::string> check_value(const OrbOptionSpec& spec, const char* text,
                                       uint64_t& value);
// What is wrong with options that share a maximum, as `o` holds them, naming
// the option; nullopt if nothing.
struct SharedMaxProblem {
  const OrbOptionSpec* spec;
  std::string value;  // "600000 + 500000"
  std::string why;
};
std::optional<SharedMaxProblem> check_shared_maxima(const FabricOptions& o);

// The options as a Markdown table: option, transports, default, range, use.
std::string orb_options_markdown();

}  // namespace clanorb
