// What VIPL leaves for a log line beside its VIP_RETURN: the emulated NIC's
// own words for the failure (clan_emul/error_detail.hpp), on the caller's
// thread, so that giop:via can say why and not only VIP_ERROR_RESOURCE.
#include <catch2/catch.hpp>

#include <string>

#include "clan_emul/error_detail.hpp"
#include "tests/via/via_test_util.hpp"

using namespace via_test;

namespace {
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("VipOpenNic on a node name this process holds: VIP_ERROR_RESOURCE, and the clash in words",
          "[via][errors]") {
  RuntimeDir dir;
  Node first;
  REQUIRE(first.open("held"));
  VIP_NIC_HANDLE second = nullptr;
  clan::clear_error();
  CHECK(VipOpenNic("held", &second) == VIP_ERROR_RESOURCE);
  CHECK(clan::last_error_code() == clan::Errc::kAddressInUse);
  CHECK(clan::last_error_message() ==
        "node name 'held' is already taken by this process (lock '" + dir.path + "/held.lock')");
}

TEST_CASE("VipConnectRequest to a node not running: VIP_NO_MATCH, and where it was looked for",
          "[via][errors]") {
  RuntimeDir dir;
  Node c;
  REQUIRE(c.open("asker"));
  VIP_VI_ATTRIBUTES ca = vi_attributes(c.ptag);
  VIP_VI_HANDLE vi = nullptr;
  REQUIRE(VipCreateVi(c.nic, &ca, nullptr, nullptr, &vi) == VIP_SUCCESS);
  Address local("", "1"), ghost("ghost", "1");
  VIP_VI_ATTRIBUTES ra{};
  clan::clear_error();
  CHECK(VipConnectRequest(vi, local.get(), ghost.get(), 2000, &ra) == VIP_NO_MATCH);
  CHECK(clan::last_error_code() == clan::Errc::kRefused);
  CHECK(contains(clan::last_error_message(),
                 "no node 'ghost' is running in the runtime directory '" + dir.path + "'"));
}
