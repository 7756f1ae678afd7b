// Errors a user meets when a clanorb endpoint cannot be made: each names its
// cause at omniORB's default trace level (no -ORBtraceLevel given) — the bad
// part of a malformed endpoint, the runtime directory and errno of a fabric
// that cannot start, the VIPL error and the node name of a giop:via clash.
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "orb/orb_fixture.hpp"

using namespace clan::orbtest;

namespace {

// Runs orb_test_peer server with `args` in the environment `env` (only that:
// no omniORB settings of this process leak in) until it exits.
Finished run_server(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::vector<std::string> all{"server"};
  all.insert(all.end(), args.begin(), args.end());
  Process p(kPeerPath, all, /*merge_stderr=*/true, env);
  p.close_stdin();  // a server that did start stops at once
  return collect(p);
}

std::vector<std::string> runtime_env(const std::string& dir) { return {"CLAN_RUNTIME_DIR=" + dir}; }

// The server refuses to start and its output holds `message`.
Finished check_refused(const std::vector<std::string>& args, const std::vector<std::string>& env,
                       const std::string& message) {
  Finished o = run_server(args, env);
  INFO(o.output);
  CHECK(o.code != 0);
  CHECK(o.has(message));
  return o;
}

}  // namespace

TEST_CASE("a malformed endpoint is logged with what is wrong with it, at the default trace level",
          "[orb][errors]") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"giop:clan:foo:bar:baz", "too many ':' (a node name has no ':')"},
      {"giop:clan:node:99999", "port 99999 is above 65535"},
      {"giop:otp:node:http", "port 'http' is not a number from 1 to 65535"},
      {"giop:via:node", "missing ':' between node and port"},
      {"giop:clan:no/slash:", "character '/' is not allowed in a node name (A-Z a-z 0-9 . _ -)"},
      {"giop:otp:" + std::string(64, 'n') + ":", "the node name is 64 characters, above 63"},
      {"giop:via:..:1", "'..' is not a node name"},
  };
  TempDir dir;
  for (const auto& [endpoint, reason] : cases) {
    INFO(endpoint);
    const Finished o = run_server({"-ORBendPoint", endpoint}, runtime_env(dir.path()));
    INFO(o.output);
    CHECK(o.code != 0);
    const std::string scheme = endpoint.substr(0, endpoint.find(':', 5));
    CHECK(o.has(scheme + ": bad endpoint '" + endpoint + "': " + reason + "; expected " + scheme +
                ":[<node>]:[<port>]"));
  }
}

TEST_CASE("a runtime directory that cannot be made is named, with errno, for every transport",
          "[orb][errors]") {
  TempDir dir;
  const std::string file = dir.path() + "/a-file";
  std::ofstream(file) << "not a directory\n";
  const std::string bad = file + "/x";
  for (const char* endpoint : {"giop:clan::", "giop:otp::"}) {
    INFO(endpoint);
    const Finished o = run_server({"-ORBendPoint", endpoint}, runtime_env(bad));
    INFO(o.output);
    CHECK(o.code != 0);
    // Logged under the transport that asked for the fabric.
    CHECK(o.has(std::string(endpoint, std::strlen(endpoint) - 2) + ": cannot start node 'orb"));
    CHECK(o.has("': cannot create the runtime directory '" + bad + "': mkdir: Not a directory (errno 20)"));
  }
  const Finished o = run_server({"-ORBendPoint", "giop:via::"}, runtime_env(bad));
  INFO(o.output);
  CHECK(o.code != 0);
  CHECK(o.has("giop:via: cannot open VIA NIC 'via"));
  CHECK(o.has("cannot create the runtime directory '" + bad + "': mkdir: Not a directory (errno 20)"));
}

TEST_CASE("a runtime directory that is a file is named, and is not called a system call failure",
          "[orb][errors]") {
  TempDir dir;
  const std::string file = dir.path() + "/a-file";
  std::ofstream(file) << "not a directory\n";
  const Finished o = check_refused({"-ORBendPoint", "giop:clan::"}, runtime_env(file),
                                   "the runtime directory '" + file + "' exists and is not a directory");
  INFO(o.output);
  CHECK_FALSE(o.has("system call failed"));
}

TEST_CASE("giop:via asking for the node name giop:clan holds in the same process names the clash",
          "[orb][errors]") {
  TempDir dir;
  check_refused({"-ORBendPoint", "giop:clan:twice:", "-ORBendPoint", "giop:via:twice:"},
                runtime_env(dir.path()),
                "giop:via: cannot open VIA NIC 'twice': VIP_ERROR_RESOURCE: node name 'twice' is already "
                "taken by this process (lock '" + dir.path() + "/twice.lock'); giop:via needs a node name "
                "of its own");
}

TEST_CASE("two processes asking for the same giop:via node name: the second names the clash",
          "[orb][errors]") {
  TempDir dir;
  Process first(kPeerPath, {"server", "-ORBendPoint", "giop:via:shared:"}, /*merge_stderr=*/true,
                runtime_env(dir.path()));
  REQUIRE(first.wait_for_line("ready"));
  check_refused({"-ORBendPoint", "giop:via:shared:"}, runtime_env(dir.path()),
                "giop:via: cannot open VIA NIC 'shared': VIP_ERROR_RESOURCE: node name 'shared' is in use by "
                "another process (lock '" + dir.path() + "/shared.lock' is held)");
  first.close_stdin();
  CHECK(first.wait() == 0);
}

TEST_CASE("a port another endpoint of the node already has is named, with the transport that asked",
          "[orb][errors]") {
  TempDir dir;
  check_refused({"-ORBendPoint", "giop:clan:pp:5", "-ORBendPoint", "giop:otp:pp:5"}, runtime_env(dir.path()),
                "giop:otp: cannot listen on port 5: node 'pp' already listens on port 5");
}
