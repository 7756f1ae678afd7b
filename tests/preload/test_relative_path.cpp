// LD_PRELOAD may name the library by a relative path, and a program may
// change its working directory before its first ORB_init (daemons do): the
// preload still finds its plugins, beside where it was loaded from.
#include <filesystem>

#include "preload/preload_fixture.hpp"

using namespace clan::preloadtest;

TEST_CASE("named by a relative path, in a program that changes directory before ORB_init",
          "[preload]") {
  const std::string relative =
      std::filesystem::relative(kPreloadLib, std::filesystem::current_path()).string();
  INFO("LD_PRELOAD=" << relative << " from " << std::filesystem::current_path().string());
  REQUIRE(relative.front() != '/');
  Process server(ORB_TEST_PEER_PLAIN, {"server", "-ORBendPoint", "giop:clan::"}, /*merge_stderr=*/true,
                 environment_with({"LD_PRELOAD=" + relative, "TEST_PEER_CHDIR=/"}));
  auto echo_line = server.wait_for_line("echo IOR:", 30s);
  REQUIRE(echo_line);
  CHECK(echo_line->find("IOR:") != std::string::npos);
  server.close_stdin();
  CHECK(server.wait() == 0);
}
