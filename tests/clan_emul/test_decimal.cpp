// clan::parse_decimal: the one reading of numbers a user gives (ORB options,
// CLAN_SPIN_NS).
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "clan_emul/decimal.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/nic.hpp"

TEST_CASE("numbers a user gives are decimal digits and nothing else", "[decimal]") {
  using clan::ValueProblem;
  const std::vector<std::pair<std::string, clan::ParsedValue>> cases{
      {"0", {0, ValueProblem::kNone}},
      {"007", {7, ValueProblem::kNone}},
      {"18446744073709551615", {UINT64_MAX, ValueProblem::kNone}},
      {"18446744073709551616", {0, ValueProblem::kTooLarge}},
      {"99999999999999999999x", {0, ValueProblem::kNotDecimal}},
      {"", {0, ValueProblem::kEmpty}},
      {"-0", {0, ValueProblem::kNegative}},
      {"+5", {0, ValueProblem::kNotDecimal}},
      {" 5", {0, ValueProblem::kNotDecimal}},
      {"5\n", {0, ValueProblem::kNotDecimal}},
      {"0x10", {0, ValueProblem::kNotDecimal}},
      {"1e3", {0, ValueProblem::kNotDecimal}},
      {"1.5", {0, ValueProblem::kNotDecimal}},
  };
  for (const auto& [text, want] : cases) {
    INFO("'" << text << "'");
    const clan::ParsedValue got = clan::parse_decimal(text);
    CHECK(got.problem == want.problem);
    CHECK(got.value == want.value);
  }
}

namespace {
// Sets CLAN_SPIN_NS for one scope (ctest runs each test case in a process
// of its own; the variable is restored all the same).
class SpinEnv {
 public:
  explicit SpinEnv(const char* value) {
    if (const char* old = std::getenv("CLAN_SPIN_NS")) old_ = old;
    ::setenv("CLAN_SPIN_NS", value, 1);
  }
  ~SpinEnv() {
    if (old_.empty()) ::unsetenv("CLAN_SPIN_NS");
    else ::setenv("CLAN_SPIN_NS", old_.c_str(), 1);
  }

 private:
  std::string old_;
};
}  // namespace

TEST_CASE("a NIC refuses a CLAN_SPIN_NS that is not 0 to 1 s in decimal digits", "[decimal][nic]") {
  for (const char* bad : {"-5", "abc", "12abc", "0x10", "1000000001", "99999999999999999999"}) {
    INFO("CLAN_SPIN_NS=" << bad);
    SpinEnv env(bad);
    clan::NicConfig nc;
    nc.name = "spin-env";
    auto nic = clan::Nic::open(nc);
    REQUIRE_FALSE(nic);
    CHECK(nic.error() == clan::Errc::kInvalidArgument);
    const std::string why = clan::error_message(nic.error());
    CHECK(why.find(std::string("CLAN_SPIN_NS='") + bad + "'") != std::string::npos);
    CHECK(why.find("0 to 1000000000 nanoseconds") != std::string::npos);
  }
  {
    SpinEnv empty("");  // unset, as an empty CLAN_RUNTIME_DIR is
    clan::NicConfig nc;
    nc.name = "spin-env";
    nc.spin_budget = std::chrono::microseconds(7);
    auto nic = clan::Nic::open(nc);
    REQUIRE(nic);
    CHECK(nic.value()->spin_budget() == std::chrono::microseconds(7));
  }
  SpinEnv env("1000000000");
  clan::NicConfig nc;
  nc.name = "spin-env";
  auto nic = clan::Nic::open(nc);
  REQUIRE(nic);
  CHECK(nic.value()->spin_budget() == std::chrono::seconds(1));
}
