// Tests of the out-of-band connection manager: the wire format of its messages.
// The multi-process scheme and the helpers: oob_test_support.hpp.
#include <catch2/catch.hpp>
#include <string>

#include "clan_emul/oob_wire.hpp"
#include "oob_test_support.hpp"

using namespace clan;
using namespace clan::oob_test;
using namespace std::chrono_literals;

TEST_CASE("oob wire: every truncation or extension of a valid frame is rejected", "[oob]") {
  using namespace oob_wire;
  Message m;
  m.hdr.node = "node-1";
  m.hdr.instance = 42;
  m.hdr.pid = 1234;
  for (uint8_t i = 0; i < m.hdr.token.size(); ++i) m.hdr.token[i] = static_cast<uint8_t>(0xa0 + i);
  m.dst_conn = 7;
  m.src_conn = 9;
  m.port = 5;
  m.dst_node = "node-2";
  m.reason = RejectReason::kRejected;
  m.blob = pattern(100, 3);
  for (uint8_t t = 1; t <= kMaxMsgType; ++t) {
    m.hdr.type = static_cast<MsgType>(t);
    auto f = encode(m);
    auto ok = decode(f);
    REQUIRE(ok.has_value());
    CHECK(ok->hdr.node == "node-1");
    CHECK(ok->hdr.instance == 42);
    CHECK(ok->hdr.token == m.hdr.token);
    for (std::size_t len = 0; len < f.size(); ++len) {
      INFO(to_string(m.hdr.type) << " truncated to " << len);
      CHECK_FALSE(decode({f.data(), len}).has_value());
    }
    f.push_back(std::byte{0});
    CHECK_FALSE(decode(f).has_value());
  }
}

TEST_CASE("oob wire: bad magic, version, type, name, pid, ids and lengths are rejected", "[oob]") {
  using namespace oob_wire;
  Message m;
  m.hdr.type = MsgType::kConnectReq;
  m.hdr.node = "n";
  m.hdr.instance = 1;
  m.hdr.pid = 1;
  m.src_conn = 1;
  m.dst_node = "d";
  auto good = encode(m);
  REQUIRE(decode(good).has_value());
  auto bad = [&](std::size_t off, uint8_t v) {
    auto f = good;
    f[off] = std::byte{v};
    return !decode(f).has_value();
  };
  CHECK(bad(0, 0));     // magic
  CHECK(bad(4, 2));     // version 2, without the reply port and destination
  CHECK(bad(4, 4));     // a later version
  CHECK(bad(5, 0));     // type 0
  CHECK(bad(5, 99));    // unknown type
  CHECK(bad(7, '/'));   // node name character
  CHECK(bad(6, 0));     // empty node name
  m.hdr.pid = 0;
  CHECK_FALSE(decode(encode(m)).has_value());
  m.hdr.pid = 1;
  m.src_conn = 0;
  CHECK_FALSE(decode(encode(m)).has_value());
  m.src_conn = 1;
  m.blob.resize(kMaxBlob + 1);
  CHECK_FALSE(decode(encode(m)).has_value());
  CHECK_FALSE(valid_node_name(".."));
  CHECK_FALSE(valid_node_name(std::string(65, 'a')));
  CHECK(valid_node_name(std::string(64, 'a')));
}
