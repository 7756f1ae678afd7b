// giop:via across hosts, without an ORB: the via NIC listens for other hosts
// at -ORBclanHost (or serves this host only when it cannot), its published
// reach is its own node's, and a via component of another host is reached at
// "giop:via:NODE@HOST:PORT:PORT".
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "orb_transports/common/component_usability.hpp"
#include "orb_transports/common/fabric.hpp"
#include "orb_transports/common/ior_component.hpp"
#include "orb_transports/via/via_address.hpp"
#include "orb_transports/via/via_nic.hpp"
#include "tools/ior_forgery.hpp"

using namespace clanorb;

namespace {

// -ORBclanHost for the test's lifetime, in a runtime directory of its own.
struct HostOption {
  std::string dir;
  explicit HostOption(const std::string& host) {
    char tmpl[] = "/tmp/clanorb-via-hosts-XXXXXX";
    dir = mkdtemp(tmpl);
    setenv("CLAN_RUNTIME_DIR", dir.c_str(), 1);
    fabric_options().host = host;
  }
  ~HostOption() {
    ViaNic::release();
    fabric_options().host.clear();
    unsetenv("CLAN_RUNTIME_DIR");
    std::filesystem::remove_all(dir);
  }
};

std::mutex log_mu;
std::vector<std::string> log_lines;
void capture(const char* line) {
  std::lock_guard lock(log_mu);
  log_lines.emplace_back(line);
}
bool logged(const std::string& what) {
  std::lock_guard lock(log_mu);
  for (const auto& l : log_lines)
    if (l.find(what) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("giop:via crosses hosts", "[via_plugin][hosts]") {
  CHECK(tag_crosses_hosts(kViaIorTag));
  CHECK(scheme_crosses_hosts("giop:via"));
  CHECK(tag_crosses_hosts(kClanIorTag));
}

TEST_CASE("the via NIC with -ORBclanHost publishes its own node's reach", "[via_plugin][hosts]") {
  HostOption host("127.0.0.1");
  auto nic = ViaNic::get();
  REQUIRE(nic);
  const std::string prefix = "127.0.0.1:";
  REQUIRE(nic->reach().compare(0, prefix.size(), prefix) == 0);
  CHECK(std::stoul(nic->reach().substr(prefix.size())) > 0);
  CHECK(ViaNic::published_reach() == nic->reach());
  // The fabric's node (giop:clan's) is not started by giop:via.
  CHECK(Fabric::published_reach().empty());
}

TEST_CASE("the via NIC without -ORBclanHost publishes no reach", "[via_plugin][hosts]") {
  HostOption host("");
  auto nic = ViaNic::get();
  REQUIRE(nic);
  CHECK(nic->reach().empty());
  CHECK(ViaNic::published_reach().empty());
}

TEST_CASE("the via NIC whose wire cannot listen at -ORBclanHost serves this host, saying why",
          "[via_plugin][hosts]") {
  HostOption host("192.0.2.1");  // TEST-NET-1: never this host's
  omniORB::setLogFunction(&capture);
  auto nic = ViaNic::get();
  omniORB::setLogFunction(nullptr);
  REQUIRE(nic);
  CHECK(nic->reach().empty());
  CHECK(logged("giop:via: node '" + nic->node() + "' serves this host only, its wire to other hosts failed: "));
}

TEST_CASE("a via component of another host is reached at its node's tcp address", "[via_plugin][hosts]") {
  const IorComponent c{test::another_boot_id(), "giop:via:srv:7", "/tmp/elsewhere", "10.0.0.2:7460"};
  CHECK(address_from_here(c) == "giop:via:srv@10.0.0.2:7460:7");
  fabric_options().host.clear();
  CHECK(why_not_across_hosts(c).find("this process has no -ORBclanHost") != std::string::npos);
  fabric_options().host = "10.0.0.1";
  CHECK(why_not_across_hosts(c).empty());
  IorComponent silent = c;
  silent.reach.clear();
  CHECK(why_not_across_hosts(silent).find("publishes no address for other hosts") != std::string::npos);
  CHECK(address_from_here(silent) == "giop:via:srv:7");
  fabric_options().host.clear();
}

TEST_CASE("the reach of a node is -ORBclanHost and its listener's port", "[via_plugin][hosts]") {
  FabricOptions o;
  CHECK(host_listen_address(o).empty());
  o.host = "10.0.0.1";
  CHECK(host_listen_address(o) == "10.0.0.1:0");
  fabric_options().host = "10.0.0.1";
  CHECK(reach_at(7460) == "10.0.0.1:7460");
  CHECK(reach_at(0).empty());
  fabric_options().host.clear();
  CHECK(reach_at(7460).empty());
}

TEST_CASE("a via address whose node is too long for VIPL is refused, not cut", "[via_plugin][hosts]") {
  HostOption host("");
  const std::string node = std::string(40, 'n') + "@" + std::string(20, 'h') + ".example:7460";
  ViaAddress address(node, 1);
  CORBA::Boolean timed_out = 0;
  omni_time_t deadline;
  CHECK(address.Connect(deadline, 0, timed_out) == nullptr);
  CHECK_FALSE(timed_out);
}
