// Request-reply and one-way traffic over every transport: echo of strings of
// several sizes, ttcp exactly-once transfers with content checked by the
// servant, and a stream of one-ways totalled by received().
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "orb/generate.hpp"
#include "orb/orb_fixture.hpp"

using namespace clan::orbtest;

TEST_CASE("echo returns the empty string, a small string and a 1 MiB string", "[orb]") {
  ORB_TEST_OVER_EVERY_TRANSPORT();
  Server server(t, mode);
  echo_var e = server.echo();
  REQUIRE(!CORBA::is_nil(e));

  CORBA::String_var empty = e->echoString("");
  CHECK(std::string(empty.in()).empty());

  CORBA::String_var small = e->echoString("Hello, CLAN");
  CHECK(std::string(small.in()) == "Hello, CLAN");

  std::string big(1u << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('!' + (i * 7) % 90);
  CORBA::String_var back = e->echoString(big.c_str());
  CHECK(std::string(back.in()) == big);

  CHECK(server.stop() == 0);
}

TEST_CASE("ttcp exactly-once of 0 B, 1 B, 64 KiB and 1 MiB arrives intact", "[orb]") {
  ORB_TEST_OVER_EVERY_TRANSPORT();
  Server server(t, mode);
  ttcp_var tt = server.ttcp_obj();
  REQUIRE(!CORBA::is_nil(tt));

  unsigned long long total = 0;
  for (size_t len : {size_t{0}, size_t{1}, size_t{64} << 10, size_t{1} << 20}) {
    INFO("size " << len);
    ttcp::Buffer buf = pattern_buffer(len);
    CHECK(system_exception_of([&] { tt->receive_exactly_once(buf); }).empty());
    total += len;
    CHECK(tt->received() == total);
  }

  // The servant really checks: a buffer with one byte changed is refused.
  ttcp::Buffer bad = pattern_buffer(4096);
  bad[1234] = static_cast<CORBA::Octet>(bad[1234] ^ 0x40);
  CHECK(system_exception_of([&] { tt->receive_exactly_once(bad); }) == "BAD_PARAM");
  CHECK(tt->received() == total);

  // Figure 12's element-by-element marshalling.
  ttcp::PairSeq pairs(10000);
  pairs.length(10000);
  for (CORBA::ULong i = 0; i < pairs.length(); ++i) {
    pairs[i].a = pair_a(i);
    pairs[i].b = pair_b(i);
  }
  CHECK(system_exception_of([&] { tt->receive_marshalled(pairs); }).empty());
  CHECK(tt->received() == total + 8 * 10000);

  CHECK(server.stop() == 0);
}

TEST_CASE("oneway calls: received() totals many receive_at_most_once calls", "[orb]") {
  ORB_TEST_OVER_EVERY_TRANSPORT();
  Server server(t, mode);
  ttcp_var tt = server.ttcp_obj();
  REQUIRE(!CORBA::is_nil(tt));

  // Sizes vary so that a lost, repeated or merged one-way changes the total.
  constexpr int kCalls = 2000;
  unsigned long long total = 0;
  std::vector<ttcp::Buffer> bufs;
  for (size_t len : {size_t{0}, size_t{1}, size_t{100}, size_t{1000}, size_t{8192}})
    bufs.push_back(pattern_buffer(len));
  for (int i = 0; i < kCalls; ++i) {
    const ttcp::Buffer& b = bufs[static_cast<size_t>(i) % bufs.size()];
    tt->receive_at_most_once(b);
    total += b.length();
  }

  // One-ways on one connection arrive in order before the received() request,
  // but omniORB may dispatch the last ones on other threads concurrently with
  // received() (the connection is re-armed before each upcall). So received()
  // is asked again until it reaches the total, within a bound; it must never
  // exceed it (~0 means the servant saw a corrupt buffer).
  unsigned long long got = 0;
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    got = tt->received();
  } while (got < total && std::chrono::steady_clock::now() < end);
  CHECK(got == total);

  CHECK(server.stop() == 0);
}
