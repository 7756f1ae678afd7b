// clanorb's ORB options: a value out of range makes ORB_init fail, with the
// option named in omniORB's log, instead of being clamped or failing later
// at connect time.
#include <optional>
#include <string>
#include <vector>

#include "orb/orb_fixture.hpp"

using namespace clan::orbtest;

namespace {

// Runs the test peer's client with `options`; what it printed (stdout and
// stderr), until it exits.
std::string client_output(const std::vector<std::string>& options, int& exit_code) {
  std::vector<std::string> args{"client"};
  args.insert(args.end(), options.begin(), options.end());
  Process p(ORB_TEST_PEER, args, /*merge_stderr=*/true);
  std::string all;
  while (std::optional<std::string> line = p.read_line()) all += *line + "\n";
  exit_code = p.wait();
  return all;
}

}  // namespace

TEST_CASE("ORB_init refuses clanorb options out of range and names them", "[orb][options]") {
  const std::vector<std::pair<std::string, std::string>> bad{
      {"clanRingBytes", "1000"},       // not a power of two
      {"clanRingBytes", "131072"},     // too small for a 64 KiB message twice over
      {"clanRingBytes", "2147483648"}, // beyond what a peer accepts
      {"otpLossPpm", "1000001"},
      {"otpCorruptPpm", "2000000"},
      {"otpWindow", "1025"},
      {"otpRtoUs", "0"},
  };
  for (const auto& [option, value] : bad) {
    INFO("-ORB" << option << " " << value);
    int code = -1;
    const std::string out = client_output({"-ORB" + option, value}, code);
    INFO(out);
    CHECK(code == kClientUsage);
    CHECK(out.find("ORB_init: INITIALIZE") != std::string::npos);
    CHECK(out.find("option " + option + ",") != std::string::npos);
  }
}

TEST_CASE("ORB_init refuses loss and corruption that add up to more than every datagram",
          "[orb][options]") {
  int code = -1;
  const std::string all = client_output({"-ORBotpLossPpm", "600000", "-ORBotpCorruptPpm", "500000"}, code);
  INFO(all);
  CHECK(code == kClientUsage);
  // Whichever of the two omniORB looks at second is refused.
  CHECK((all.find("option otpCorruptPpm,") != std::string::npos ||
         all.find("option otpLossPpm,") != std::string::npos));
}

TEST_CASE("clanorb options in range are accepted", "[orb][options]") {
  // The client then stops for want of an object reference, past ORB_init.
  for (const auto& [option, value] : std::vector<std::pair<std::string, std::string>>{
           {"clanRingBytes", "524288"}, {"otpWindow", "0"}, {"otpRtoUs", "1"}, {"otpLossPpm", "1000000"}}) {
    INFO("-ORB" << option << " " << value);
    int code = -1;
    const std::string out = client_output({"-ORB" + option, value}, code);
    INFO(out);
    CHECK(out.find("ORB_init") == std::string::npos);
    CHECK(out.find("Bad parameter") == std::string::npos);
  }
}
