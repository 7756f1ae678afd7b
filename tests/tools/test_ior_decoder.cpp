// clanorb's IOR component format and clanorb-ior's decoding, without an ORB:
// round trips, and refusal (with the reason, never a read out of bounds) of
// everything that is not an IOR or not a component.
#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "orb_transports/common/component_usability.hpp"
#include "orb_transports/common/ior_component.hpp"
#include "tools/clanorb-ior/ior_structure.hpp"
#include "tools/clanorb-ior/ior_text.hpp"
#include "tools/ior_forgery.hpp"

using namespace clanorb;
using namespace clanorb::ior_tool;

namespace {

const IorComponent kSample{"4b379784-1b9c-432d-a144-51f68dfca3d9", "giop:clan:srv:7",
                           "/tmp/clanorb-1000", ""};

bool decodes(uint32_t tag, const std::vector<uint8_t>& data, IorComponent& out, std::string& error) {
  return decode_ior_component(tag, data.data(), data.size(), out, error);
}

Ior decoded(const std::string& text) {
  std::vector<uint8_t> octets;
  std::string error;
  Ior ior;
  INFO(error);
  REQUIRE(ior_octets(text, octets, error));
  REQUIRE(decode_ior(octets, ior, error));
  return ior;
}

}  // namespace

TEST_CASE("an IOR component round-trips", "[ior_tool]") {
  IorComponent back;
  std::string error;
  REQUIRE(decodes(kClanIorTag, encode_ior_component(kSample), back, error));
  CHECK(back.boot_id == kSample.boot_id);
  CHECK(back.address == kSample.address);
  CHECK(back.runtime_dir == kSample.runtime_dir);
}

TEST_CASE("an IOR component of two strings is accepted, its runtime directory unchecked",
          "[ior_tool]") {
  CdrWriter w;
  w.write_string(boot_id());
  w.write_string("giop:otp:srv:3");
  IorComponent back;
  std::string error;
  REQUIRE(decodes(kOtpIorTag, w.bytes(), back, error));
  CHECK(back.runtime_dir.empty());
  CHECK(why_unusable_here(back, true).empty());
}

TEST_CASE("every truncation of an IOR component is refused as truncated", "[ior_tool]") {
  const std::vector<uint8_t> full = encode_ior_component(kSample);
  // Cut inside the first two strings: the third is optional, so cuts after them differ.
  const size_t needed = full.size() - (4 + kSample.runtime_dir.size() + 1);
  for (size_t len = 0; len < needed; ++len) {
    IorComponent back;
    std::string error;
    INFO("length " << len);
    CHECK_FALSE(decode_ior_component(kClanIorTag, full.data(), len, back, error));
    CHECK(error.find("truncated") != std::string::npos);
  }
}

TEST_CASE("a malformed IOR component is refused with its reason", "[ior_tool]") {
  IorComponent back;
  std::string error;
  SECTION("an address of another transport than the tag's") {
    CHECK_FALSE(decodes(kViaIorTag, encode_ior_component(kSample), back, error));
    CHECK(error == "the address 'giop:clan:srv:7' is not a giop:via: address");
  }
  SECTION("a bad byte-order octet") {
    std::vector<uint8_t> data = encode_ior_component(kSample);
    data[0] = 7;
    CHECK_FALSE(decodes(kClanIorTag, data, back, error));
    CHECK(error == "the byte-order octet is 7, not 0 or 1");
  }
  SECTION("a string without its NUL") {
    std::vector<uint8_t> data = encode_ior_component(kSample);
    data[8 + kSample.boot_id.size()] = 'x';  // 1 byte order + 3 padding + 4 length
    CHECK_FALSE(decodes(kClanIorTag, data, back, error));
    CHECK(error == "boot id is not NUL-terminated");
  }
  SECTION("a length beyond the data") {
    CdrWriter w;
    w.write_ulong(0xffffffff);
    CHECK_FALSE(decodes(kClanIorTag, w.bytes(), back, error));
    CHECK(error.find("truncated boot id") == 0);
  }
  SECTION("a tag that is not clanorb's") {
    CHECK_FALSE(decodes(3, encode_ior_component(kSample), back, error));
  }
}

TEST_CASE("a component is unusable here from another host or runtime directory", "[ior_tool]") {
  IorComponent c{boot_id(), "giop:clan:srv:7", this_runtime_dir(), ""};
  CHECK(why_unusable_here(c, true).empty());
  CHECK(why_unusable_here(c, false) == "giop:clan is not linked into this program");
  IorComponent other_host = c;
  other_host.boot_id = test::another_boot_id();
  CHECK(why_unusable_here(other_host, true).find("its server runs on another host") == 0);
  IorComponent other_dir = c;
  other_dir.runtime_dir = "/nonexistent/clanorb-runtime";
  CHECK(why_unusable_here(other_dir, true) ==
        "its server uses the runtime directory /nonexistent/clanorb-runtime, this process uses " +
            this_runtime_dir() + " (another user, or another CLAN_RUNTIME_DIR)");
}

TEST_CASE("a runtime directory spelled another way is the same directory", "[ior_tool]") {
  char templ[] = "/tmp/clanorb-ior-test-XXXXXX";
  REQUIRE(mkdtemp(templ));
  const std::string dir = templ;
  const char* before = std::getenv("CLAN_RUNTIME_DIR");
  const std::string saved = before ? before : "";
  setenv("CLAN_RUNTIME_DIR", dir.c_str(), 1);  // no other thread runs in this binary
  IorComponent c{boot_id(), "giop:clan:srv:7", dir + "/./", ""};
  CHECK(why_unusable_here(c, true).empty());
  if (before)
    setenv("CLAN_RUNTIME_DIR", saved.c_str(), 1);
  else
    unsetenv("CLAN_RUNTIME_DIR");
  rmdir(dir.c_str());
}

TEST_CASE("text that is not a stringified IOR is refused with its reason", "[ior_tool]") {
  std::vector<uint8_t> octets;
  std::string error;
  CHECK_FALSE(ior_octets("corbaloc::host:2809/x", octets, error));
  CHECK(error == "not a stringified IOR: it does not start with \"IOR:\"");
  CHECK_FALSE(ior_octets("IOR:", octets, error));
  CHECK(error == "the IOR has no hex digits after \"IOR:\"");
  CHECK_FALSE(ior_octets("IOR:010", octets, error));
  CHECK(error == "the IOR has an odd number of hex digits (3)");
  CHECK_FALSE(ior_octets("IOR:01zz", octets, error));
  CHECK(error == "the IOR has a character that is not a hex digit, 'z', at position 6 "
                 "(counting \"IOR:\" from 0)");
  CHECK(ior_octets("  ior:0100\n", octets, error));
  CHECK(octets == std::vector<uint8_t>{1, 0});
}

TEST_CASE("a forged IOR decodes to its parts", "[ior_tool]") {
  const std::vector<uint8_t> component = encode_ior_component(kSample);
  const Ior ior = decoded(test::forged_ior("example.org", 2809, {{kClanIorTag, component}}));
  CHECK(ior.type_id == "IDL:echo:1.0");
  REQUIRE(ior.profiles.size() == 1);
  const Profile& p = ior.profiles[0];
  CHECK(p.tag == kTagInternetIop);
  CHECK((p.major == 1 && p.minor == 2));
  CHECK(p.host == "example.org");
  CHECK(p.port == 2809);
  CHECK(p.object_key.size() == 3);
  REQUIRE(p.components.size() == 1);
  CHECK(p.components[0].tag == kClanIorTag);
  CHECK(p.components[0].data == component);
}

TEST_CASE("every truncation of an IOR is refused, none read out of bounds", "[ior_tool]") {
  const std::string text =
      test::forged_ior("example.org", 2809, {{kClanIorTag, encode_ior_component(kSample)}});
  std::vector<uint8_t> octets;
  std::string error;
  REQUIRE(ior_octets(text, octets, error));
  for (size_t len = 0; len < octets.size(); ++len) {
    const std::vector<uint8_t> cut(octets.begin(), octets.begin() + static_cast<long>(len));
    Ior ior;
    INFO("length " << len);
    CHECK_FALSE(decode_ior(cut, ior, error));
    CHECK(error.find("truncated") != std::string::npos);
  }
}

TEST_CASE("an IOR announcing more components than it holds is refused", "[ior_tool]") {
  CdrWriter body;
  body.write_octet(1);
  body.write_octet(2);
  body.write_string("h");
  body.write_ushort(1);
  body.write_octets({});
  body.write_ulong(0x10000000);  // components announced, none there
  CdrWriter w;
  w.write_string("IDL:x:1.0");
  w.write_ulong(1);
  w.write_ulong(0);
  w.write_octets(body.bytes());
  Ior ior;
  std::string error;
  CHECK_FALSE(decode_ior(w.bytes(), ior, error));
  CHECK(error == "profile 1: truncated components: 268435456 announced, 0 bytes left");
}
