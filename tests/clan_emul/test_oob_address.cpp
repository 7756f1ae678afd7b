// Tests of the out-of-band connection manager: the parsing of node and
// listen addresses, and the numeric forms the peer table keys records by.
// Connecting with them: test_oob_tcp.cpp.
#include <catch2/catch.hpp>
#include <string>

#include "clan_emul/error_detail.hpp"
#include "clan_emul/oob_address.hpp"

using namespace clan;
using namespace clan::oob_detail;

TEST_CASE("oob address: names, numeric hosts and ports give the keys of the peer table", "[oob]") {
  PeerAddress a;
  REQUIRE(parse_peer_address("node-1", a) == Errc::kOk);
  CHECK_FALSE(a.remote());
  CHECK(a.key() == "node-1");
  REQUIRE(parse_peer_address("node-1@10.0.0.2", a) == Errc::kOk);
  CHECK(a.key() == "node-1@10.0.0.2:7460");
  REQUIRE(parse_peer_address("n@10.0.0.2:65535", a) == Errc::kOk);
  CHECK(a.key() == "n@10.0.0.2:65535");
  REQUIRE(parse_peer_address("n@[0:0::1]:9", a) == Errc::kOk);  // IPv6 in its shortest form
  CHECK(a.key() == "n@[::1]:9");
  REQUIRE(parse_peer_address("n@localhost:9", a) == Errc::kOk);  // a DNS name, resolved
  CHECK((a.host == "127.0.0.1" || a.host == "[::1]"));
}

TEST_CASE("oob address: a DNS name takes 253 characters, labels of 63", "[oob]") {
  auto name_of = [](std::size_t label, std::size_t total) {
    std::string s;
    while (s.size() < total) {
      if (!s.empty()) s += '.';
      s += std::string(std::min(label, total - s.size()), 'a');
    }
    return s;
  };
  PeerAddress a;
  // Well formed, so they are looked up ("invalid" is never a real domain).
  const std::string longest = name_of(63, 253 - 8) + ".invalid";
  REQUIRE(longest.size() == 253);
  Errc e = parse_peer_address("n@" + longest + ":1", a);
  CHECK((e == Errc::kInvalidArgument || e == Errc::kSystem));
  CHECK(error_message(e).find("cannot resolve") != std::string::npos);
  // Malformed: refused before any lookup.
  CHECK(parse_peer_address("n@" + name_of(63, 246) + ".invalid:1", a) == Errc::kInvalidArgument);
  CHECK(error_message(Errc::kInvalidArgument).find("is not a host") != std::string::npos);
  CHECK(parse_peer_address("n@" + std::string(64, 'a') + ".invalid:1", a) == Errc::kInvalidArgument);
  CHECK(error_message(Errc::kInvalidArgument).find("is not a host") != std::string::npos);
  CHECK(parse_peer_address("n@a-.invalid:1", a) == Errc::kInvalidArgument);
  CHECK(parse_peer_address("n@a.invalid.:1", a) == Errc::kInvalidArgument);
}

TEST_CASE("oob address: listen addresses and ZeroMQ's peer addresses", "[oob]") {
  std::string host;
  uint16_t port = 1;
  REQUIRE(parse_listen_address("*", host, port) == Errc::kOk);
  CHECK(host == "*");
  CHECK(port == kDefaultOobPort);
  REQUIRE(parse_listen_address("127.0.0.1:0", host, port) == Errc::kOk);
  CHECK(host == "127.0.0.1");
  CHECK(port == 0);
  REQUIRE(parse_listen_address("[::1]:0", host, port) == Errc::kOk);
  CHECK(host == "[::1]");
  CHECK(parse_listen_address("[*]:0", host, port) == Errc::kInvalidArgument);

  CHECK(canonical_ip("10.0.0.2") == "10.0.0.2");
  CHECK(canonical_ip("::ffff:10.0.0.2") == "10.0.0.2");  // a dual-stack socket's IPv4 peer
  CHECK(canonical_ip("fe80:0::1") == "[fe80::1]");
  CHECK(canonical_ip("").empty());
  CHECK(canonical_ip("[::1]").empty());
  CHECK(canonical_ip("localhost").empty());
}
