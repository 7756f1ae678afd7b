// The clanorb-ior program on real IORs (from orb_test_peer servers) and on
// input that is not one: what it prints and its exit status.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "orb/orb_fixture.hpp"
#include "orb_transports/common/ior_component.hpp"
#include "tools/ior_forgery.hpp"

using namespace clan::orbtest;

namespace {

const Transport kTcpAndClan{"tcp+clan", {"giop:tcp:127.0.0.1:", "giop:clan::"}};

struct Run {
  int status = -1;
  std::string output;  // stdout and stderr
};

// clanorb-ior with `args`; `input` on its standard input.
Run run_tool(const std::vector<std::string>& args, const std::string& input = "") {
  Process p(CLANORB_IOR_TOOL, args, /*merge_stderr=*/true);
  if (!input.empty()) p.send_line(input);
  p.close_stdin();
  Run r;
  while (auto line = p.read_line()) r.output += *line + "\n";
  r.status = p.wait();
  return r;
}

bool has(const Run& r, const std::string& text) { return r.output.find(text) != std::string::npos; }

}  // namespace

TEST_CASE("clanorb-ior decodes a tcp+clan server's IOR: its address, this host's", "[tool]") {
  Server server(kTcpAndClan, Threading::kPerConnection);
  for (const Run& r : {run_tool({server.echo_ior()}), run_tool({}, server.echo_ior())}) {
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK(has(r, "profile 1: IIOP 1.2, host 127.0.0.1, port "));
    CHECK(has(r, "giop:clan component (0x434c4130):\n    address      giop:clan:orb"));
    CHECK(has(r, "  (this host's)\n"));
    CHECK(has(r, "    reach        (none: the server serves its own host only)\n"));
    CHECK(has(r, "    a clanorb client here uses it\n"));
    CHECK_FALSE(has(r, "TAG_ALTERNATE_IIOP_ADDRESS"));
  }
  CHECK(server.stop() == 0);
}

TEST_CASE("clanorb-ior says a clanorb client here would not use another host's component",
          "[tool]") {
  Server server(kTcpAndClan, Threading::kPerConnection);
  const std::string other = clanorb::test::another_boot_id();
  const std::string forged = clanorb::test::with_boot_id(server.echo_ior(), other);
  REQUIRE(!forged.empty());
  const Run r = run_tool({forged});
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(has(r, other + "  (another host's)"));
  CHECK(has(r, "a clanorb client here does not use it: its server runs on another host"));
  CHECK(server.stop() == 0);
}

TEST_CASE("clanorb-ior prints a component's reach, and the address a client of another host uses",
          "[tool]") {
  Server server(Transport{"clan", {"giop:clan::"}}, Threading::kPerConnection, {"-ORBclanHost", "127.0.0.1"});
  const Run here = run_tool({server.echo_ior()});
  INFO(here.output);
  CHECK(here.status == 0);
  CHECK(has(here, "    reach        127.0.0.1:"));
  CHECK(has(here, "  (where nodes of other hosts reach the server's node)\n"));
  CHECK(has(here, "    a clanorb client here uses it\n"));
  // Seen from another host: the client would connect to NODE@HOST:PORT, if
  // it had an -ORBclanHost of its own (the tool runs without one).
  const std::string forged = clanorb::test::with_boot_id(server.echo_ior(), clanorb::test::another_boot_id());
  REQUIRE(!forged.empty());
  const Run there = run_tool({forged});
  INFO(there.output);
  CHECK(has(there, "a clanorb client here does not use it: its server runs on another host"));
  CHECK(has(there, "this process has no -ORBclanHost"));
  CHECK(server.stop() == 0);
}

TEST_CASE("clanorb-ior refuses input that is not an IOR, with the reason and status 1", "[tool]") {
  const Run not_ior = run_tool({"corbaloc::host:2809/NameService"});
  CHECK(not_ior.status == 1);
  CHECK(not_ior.output ==
        "clanorb-ior: not a stringified IOR: it does not start with \"IOR:\"\n");
  const Run odd = run_tool({}, "IOR:0100000");
  CHECK(odd.status == 1);
  CHECK(odd.output == "clanorb-ior: the IOR has an odd number of hex digits (7)\n");
  const Run truncated = run_tool({"IOR:0100000005000000"});
  CHECK(truncated.status == 1);
  CHECK(truncated.output == "clanorb-ior: truncated type id: needs 5 bytes at offset 8, 0 left\n");
  const Run usage = run_tool({"-f"});
  CHECK(usage.status == 2);
  const Run missing = run_tool({"-f", "/nonexistent/ior"});
  CHECK(missing.status == 2);
  CHECK(missing.output == "clanorb-ior: cannot open /nonexistent/ior: No such file or directory\n");
}

TEST_CASE("clanorb-ior reports a truncated clanorb component as malformed, status 1", "[tool]") {
  std::vector<uint8_t> data = clanorb::encode_ior_component(
      {clanorb::boot_id(), "giop:clan:srv:7", "/tmp/clanorb-1000", ""});
  data.resize(20);  // inside the boot id
  const Run r = run_tool({clanorb::test::forged_ior("example.org", 2809, {{clanorb::kClanIorTag, data}})});
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK(has(r, "giop:clan component (0x434c4130): malformed: truncated boot id: needs 37 bytes at "
               "offset 8, 12 left\n"));
  CHECK(has(r, "clanorb-ior: 1 malformed clanorb component\n"));
}
