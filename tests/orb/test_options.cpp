// clanorb's ORB options: ORB_init refuses a value that is not a decimal
// integer in the option's range, naming the option, the accepted range and
// where the value came from (command line, configuration file, environment
// variable), instead of wrapping, clamping or failing later at connect time.
// The cases are made from the option table, so every option is covered, a
// new one included.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "orb/orb_fixture.hpp"
#include "orb_transports/common/option_table.hpp"

extern char** environ;

using namespace clan::orbtest;
using clanorb::OrbOptionSpec;

namespace {

enum class Via { kCommandLine, kConfigFile, kEnvironment };

// How ORB_init's message says where the value came from.
const char* where(Via via) {
  switch (via) {
    case Via::kCommandLine: return "given on the command line";
    case Via::kConfigFile: return "given in the configuration file";
    case Via::kEnvironment: return "given in an environment variable";
  }
  return "";
}

// Our environment without omniORB settings (other tests in this process set
// ORBotp* for their own ORB), plus `extra`.
std::vector<std::string> clean_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string_view s(*e);
    if (!s.starts_with("ORB") && !s.starts_with("OMNIORB_CONFIG=")) env.emplace_back(s);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

using Settings = std::vector<std::pair<std::string, std::string>>;

// Runs the test peer's client with `settings` given `via` one route, and
// `args` on its command line; what it printed until it exited.
Finished run_client(Via via, const Settings& settings, std::vector<std::string> args = {}) {
  TempDir dir;
  std::vector<std::string> env;
  std::vector<std::string> argv{"client"};
  for (const auto& [key, value] : settings) {
    if (via == Via::kCommandLine) argv.insert(argv.end(), {"-ORB" + key, value});
    if (via == Via::kEnvironment) env.push_back("ORB" + key + "=" + value);
  }
  if (via == Via::kConfigFile) {
    const std::string file = dir.path() + "/omniORB.cfg";
    std::ofstream out(file);
    for (const auto& [key, value] : settings) out << key << " = " << value << "\n";
    env.push_back("OMNIORB_CONFIG=" + file);
  }
  argv.insert(argv.end(), args.begin(), args.end());
  return run_to_end(ORB_TEST_PEER, argv, clean_environment(env));
}

// Runs as run_client, with omniORB printing its configuration once ORB_init
// has finished (options read, every initialiser attached).
Finished run_and_dump(Via via, const Settings& settings, std::vector<std::string> args = {}) {
  args.insert(args.end(), {"-ORBdumpConfiguration", "1"});
  return run_client(via, settings, args);
}
std::string dumped(const std::string& key, const std::string& value) {
  return "omniORB:   " + key + " = " + value + "\n";
}

struct BadValue {
  std::string text;
  const char* kind;
  // omniORB strips the blanks around a configuration file's value.
  bool blanks = false;
};

std::vector<BadValue> bad_values(const OrbOptionSpec& spec) {
  std::vector<BadValue> v{{"-1", "negative"},
                          {"-4294967295", "negative, wraps to 1 through strtoul"},
                          {"abc", "not a number"},
                          {"4294967296", "beyond 2^32-1"},
                          {"18446744073709551616", "beyond 2^64-1"},
                          {"12abc", "trailing characters"},
                          {"1e3", "exponent"},
                          {"0x10", "hexadecimal"},
                          {"+5", "sign"},
                          {" 5", "leading blank", true},
                          {"5 ", "trailing blank", true}};
  if (spec.max < UINT32_MAX) v.push_back({std::to_string(spec.max + 1), "above the range"});
  if (spec.min > 0) v.push_back({std::to_string(spec.min - 1), "below the range"});
  if (spec.power_of_two) v.push_back({std::to_string(spec.min + 1), "not a power of two"});
  if (spec.names) {
    v.push_back({"0", "a number, not a name"});
    v.push_back({std::string(spec.names[0]) + "x", "not a name"});
  }
  return v;
}

void check_refusals(Via via) {
  for (const OrbOptionSpec& spec : clanorb::orb_option_table()) {
    for (const BadValue& bad : bad_values(spec)) {
      if (bad.blanks && via == Via::kConfigFile) continue;
      INFO(spec.key << " = '" << bad.text << "' (" << bad.kind << "), " << where(via));
      const Finished o = run_client(via, {{spec.key, bad.text}});
      INFO(o.output);
      CHECK(o.code == kClientUsage);
      CHECK(o.has("ORB_init: INITIALIZE"));
      CHECK(o.has(std::string("option ") + spec.key + ","));
      CHECK(o.has(clanorb::accepted_range(spec)));
      CHECK(o.has(where(via)));
    }
  }
}

void check_range_ends_accepted(Via via) {
  for (const OrbOptionSpec& spec : clanorb::orb_option_table()) {
    for (uint64_t end : {spec.min, spec.max}) {
      const std::string value = clanorb::value_text(spec, end);
      INFO(spec.key << " = " << value << ", " << where(via));
      const Finished o = run_and_dump(via, {{spec.key, value}});
      INFO(o.output);
      CHECK_FALSE(o.has("Bad parameter"));
      CHECK(o.has(dumped(spec.key, value)));
    }
  }
}

}  // namespace

TEST_CASE("ORB_init refuses bad values of every clanorb option on the command line",
          "[orb][options]") {
  check_refusals(Via::kCommandLine);
}

TEST_CASE("ORB_init refuses bad values of every clanorb option in a configuration file",
          "[orb][options]") {
  check_refusals(Via::kConfigFile);
}

TEST_CASE("ORB_init refuses bad values of every clanorb option in the environment",
          "[orb][options]") {
  check_refusals(Via::kEnvironment);
}

TEST_CASE("clanorb options accept both ends of their ranges, from every source", "[orb][options]") {
  check_range_ends_accepted(Via::kCommandLine);
  check_range_ends_accepted(Via::kConfigFile);
  check_range_ends_accepted(Via::kEnvironment);
}

TEST_CASE("ORB_init refuses loss and corruption that add up to more than every datagram",
          "[orb][options]") {
  const Finished o =
      run_client(Via::kCommandLine, {{"otpLossPpm", "600000"}, {"otpCorruptPpm", "500000"}});
  INFO(o.output);
  CHECK(o.code == kClientUsage);
  CHECK(o.has("ORB_init: INITIALIZE"));
  CHECK(o.has("(600000 + 500000) for ORB configuration option otpLossPpm,"));
  CHECK(o.has("at most 1000000"));
}

TEST_CASE("loss and corruption are judged by their final values, from any source",
          "[orb][options]") {
  SECTION("together exactly every datagram") {
    const Finished o =
        run_and_dump(Via::kCommandLine, {{"otpLossPpm", "600000"}, {"otpCorruptPpm", "400000"}});
    INFO(o.output);
    CHECK(o.has(dumped("otpLossPpm", "600000")));
    CHECK(o.has(dumped("otpCorruptPpm", "400000")));
  }
  SECTION("the command line lowers the file's loss while raising corruption") {
    // omniORB reads the file first, then the command line (otpCorruptPpm
    // before otpLossPpm): corruption alone must not be held against the
    // file's loss, which the command line then overrides.
    const Finished o = run_and_dump(Via::kConfigFile, {{"otpLossPpm", "900000"}},
                                   {"-ORBotpLossPpm", "0", "-ORBotpCorruptPpm", "500000"});
    INFO(o.output);
    CHECK(o.has(dumped("otpLossPpm", "0")));
    CHECK(o.has(dumped("otpCorruptPpm", "500000")));
  }
}

TEST_CASE("without clanorb options, ORB_init holds the table's defaults", "[orb][options]") {
  const clanorb::FabricOptions defaults;
  const Finished o = run_and_dump(Via::kCommandLine, {});
  INFO(o.output);
  for (const OrbOptionSpec& spec : clanorb::orb_option_table())
    CHECK(o.has(dumped(spec.key, clanorb::value_text(spec, spec.get(defaults)))));
}

TEST_CASE("the README's options table is the option table", "[orb][options][readme]") {
  const std::filesystem::path readme = CLANORB_README;
  std::ifstream in(readme);
  INFO("reading " << readme.string());
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string table = clanorb::orb_options_markdown();
  INFO("README.md must hold, verbatim:\n" << table);
  CHECK(text.str().find(table) != std::string::npos);
}

TEST_CASE("ORB_init refuses a text option's bad value and keeps a good one, from every source",
          "[orb][options]") {
  struct Case {
    const char* key;
    const char* bad;
    const char* good;
  };
  for (const Case& c : {Case{"clanHost", "10.0.0.1:80", "10.0.0.1"}, Case{"clanHost", "host/name", "node-b.example"},
                        Case{"clanProvider", "TCP!", "verbs"}}) {
    for (Via via : {Via::kCommandLine, Via::kConfigFile, Via::kEnvironment}) {
      INFO(c.key << " = '" << c.bad << "', " << where(via));
      const Finished refused = run_client(via, {{c.key, c.bad}});
      INFO(refused.output);
      CHECK(refused.code == kClientUsage);
      CHECK(refused.has(std::string("option ") + c.key + ","));
      CHECK(refused.has(where(via)));
      const Finished kept = run_and_dump(via, {{c.key, c.good}});
      INFO(kept.output);
      CHECK_FALSE(kept.has("Bad parameter"));
      CHECK(kept.has(dumped(c.key, c.good)));
    }
  }
}
