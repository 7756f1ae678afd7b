// omniORB's own echo example (omniorb-doc's eg2_impl and eg2_clt, Debian's
// binaries) run unmodified over every clanorb transport with the preload. The
// server offers only that transport, and the client's trace must show the
// connection over it: the call cannot have gone over tcp.
#include <fstream>

#include "preload/preload_fixture.hpp"
#include "support/oob_runtime.hpp"

using namespace clan::preloadtest;

namespace {

const char* kDocPackage = "omniorb-doc";

// eg2_clt against `ior`, preloaded with `env`: it must reply over giop:<name>.
void check_echo_call(const std::string& ior, const std::string& name) {
  auto client = run_to_end(stock_program(kEchoExamples + "eg2_clt", kDocPackage),
                           {"-ORBtraceLevel", "25", ior}, preloaded());
  INFO(client.output);
  CHECK(client.code == 0);
  CHECK(client.output.find("The Echo object replied, \"Hello!\"") != std::string::npos);
  CHECK(client.output.find("Client opened connection to giop:" + name + ":") != std::string::npos);
}

}  // namespace

TEST_CASE("the stock echo example serves and calls over each clanorb transport",
          "[preload]") {
  for (const auto& name : kPreloadedTransports) {
    DYNAMIC_SECTION("giop:" << name) {
      Process server(stock_program(kEchoExamples + "eg2_impl", kDocPackage),
                     {"-ORBendPoint", "giop:" + name + "::"}, false, preloaded());
      std::string ior = first_line_ior(server);
      REQUIRE(!ior.empty());
      check_echo_call(ior, name);
    }
  }
}

TEST_CASE("the endpoint can come from an omniORB config file", "[preload]") {
  clan::test::RuntimeDir dir;
  const std::string config = dir.path + "/omniORB.cfg";
  std::ofstream(config) << "endPoint = giop:clan::\n";
  Process server(stock_program(kEchoExamples + "eg2_impl", kDocPackage), {}, false,
                 preloaded({"OMNIORB_CONFIG=" + config}));
  std::string ior = first_line_ior(server);
  REQUIRE(!ior.empty());
  check_echo_call(ior, "clan");
}

TEST_CASE("without it, the stock example cannot serve giop:clan", "[preload]") {
  auto server = run_to_end(stock_program(kEchoExamples + "eg2_impl", kDocPackage),
                           {"-ORBendPoint", "giop:clan::"}, environment_with());
  INFO(server.output);
  // eg2_impl reports the exception and exits 0.
  CHECK(server.output.find("Unable to create an endpoint of this description: giop:clan::") !=
        std::string::npos);
  CHECK(server.output.find("IOR:") == std::string::npos);
}
