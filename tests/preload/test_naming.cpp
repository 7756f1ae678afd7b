// Debian's omniNames serving over giop:clan only, with the preload: Debian's
// nameclt and the stock eg3 example (preloaded too) and orb_test_peer (which
// links clanorb) reach it. Without the preload, nameclt cannot: no tcp path.
#include "preload/preload_fixture.hpp"
#include "support/oob_runtime.hpp"

using namespace clan::preloadtest;

namespace {

const std::string kPeer = ORB_TEST_PEER;

// omniNames in a child process over giop:clan only, with its own log directory.
class ClanNamingService {
 public:
  ClanNamingService()
      : proc_(stock_program("/usr/bin/omniNames", "omniorb-nameserver"),
              {"-start", "-ignoreport", "-logdir", logs_.path, "-ORBendPoint", "giop:clan::"},
              /*merge_stderr=*/true, preloaded()) {
    // It prints its root context once its endpoint is bound.
    auto line = proc_.wait_for_line("Root context is ", 30s, /*anywhere=*/true);
    REQUIRE(line);
    ior_ = line->substr(line->find("IOR:"));
  }
  const std::string& ior() const { return ior_; }
  std::vector<std::string> init_ref() const { return {"-ORBInitRef", "NameService=" + ior_}; }

 private:
  clan::test::RuntimeDir logs_;
  Process proc_;
  std::string ior_;
};

Finished nameclt(const ClanNamingService& ns, std::vector<std::string> args,
                 const std::vector<std::string>& env) {
  auto all = ns.init_ref();
  all.insert(all.end(), args.begin(), args.end());
  return run_to_end(stock_program("/usr/bin/nameclt", "omniorb-nameserver"), all, env);
}

}  // namespace

TEST_CASE("omniNames over giop:clan, reached by nameclt and a clanorb client",
          "[preload]") {
  ClanNamingService ns;

  auto plain = nameclt(ns, {"list"}, environment_with());
  INFO(plain.output);
  CHECK(plain.code != 0);

  Process server(kPeer, {"server", "-ORBendPoint", "giop:clan::"});
  auto echo_line = server.wait_for_line("echo IOR:", 30s);
  REQUIRE(echo_line);
  std::string echo_ior = echo_line->substr(echo_line->find("IOR:"));

  auto bound = nameclt(ns, {"bind", "clan_echo", echo_ior}, preloaded());
  INFO(bound.output);
  REQUIRE(bound.code == 0);
  auto listed = nameclt(ns, {"list"}, preloaded());
  INFO(listed.output);
  CHECK(listed.code == 0);
  CHECK(listed.output.find("clan_echo") != std::string::npos);

  auto client = run_to_end(kPeer, {"client", "--ns", ns.ior(), "--name", "clan_echo", "--calls", "3"},
                           environment_with());
  INFO(client.output);
  CHECK(client.code == 0);
  server.close_stdin();
  CHECK(server.wait() == 0);
}

TEST_CASE("the stock eg3 example binds and resolves through omniNames over giop:clan",
          "[preload]") {
  ClanNamingService ns;
  auto args = ns.init_ref();
  args.insert(args.end(), {"-ORBendPoint", "giop:clan::"});
  Process server(stock_program(kEchoExamples + "eg3_impl", "omniorb-doc"), args, false,
                 preloaded());
  REQUIRE(!first_line_ior(server).empty());

  // eg3_impl binds its name after printing its IOR and says nothing more:
  // ask omniNames until the name resolves (each attempt is a full round trip).
  bool bound = false;
  for (int attempt = 0; attempt < 200 && !bound; ++attempt)
    bound = nameclt(ns, {"resolve", "test.my_context/Echo.Object"}, preloaded()).code == 0;
  REQUIRE(bound);

  auto client = run_to_end(stock_program(kEchoExamples + "eg3_clt", "omniorb-doc"),
                           ns.init_ref(), preloaded());
  INFO(client.output);
  CHECK(client.code == 0);
  CHECK(client.output.find("The Echo object replied") != std::string::npos);
}
