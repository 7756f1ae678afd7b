// The GIOP framer that tells omniTransport where calls end and whether they
// are answered: every GIOP version's request header, fragments, arbitrary
// splits of the stream, and non-GIOP bytes.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "orb_transports/otp/giop_framer.hpp"

using clanorb::GiopFramer;

namespace {

using Bytes = std::vector<std::byte>;

void put32(Bytes& b, uint32_t v, bool little) {
  for (int i = 0; i < 4; ++i)
    b.push_back(std::byte(little ? (v >> (8 * i)) & 0xff : (v >> (8 * (3 - i))) & 0xff));
}
void align4(Bytes& b) {
  while (b.size() % 4) b.push_back(std::byte{0});
}
// A GIOP message: header + body; the size field is filled in.
Bytes message(uint8_t minor, uint8_t type, const Bytes& body, bool little = true, bool more = false) {
  Bytes m = {std::byte{'G'}, std::byte{'I'}, std::byte{'O'}, std::byte{'P'}, std::byte{1},
             std::byte{minor}, std::byte((little ? 1 : 0) | (more ? 2 : 0)), std::byte{type}};
  put32(m, static_cast<uint32_t>(body.size()), little);
  m.insert(m.end(), body.begin(), body.end());
  return m;
}
Bytes request_12(uint8_t response_flags, size_t payload, bool more = false) {
  Bytes body;
  put32(body, 77, true);  // request_id
  body.push_back(std::byte{response_flags});
  body.resize(body.size() + payload, std::byte{0x5a});
  return message(2, 0, body, true, more);
}
Bytes request_10(bool response_expected, int contexts, bool little) {
  Bytes body;
  put32(body, static_cast<uint32_t>(contexts), little);
  for (int i = 0; i < contexts; ++i) {
    align4(body);
    put32(body, 0x4f4d4f00u + static_cast<uint32_t>(i), little);  // context_id
    put32(body, 5, little);                                        // context_data length
    for (int k = 0; k < 5; ++k) body.push_back(std::byte{0x11});
  }
  align4(body);
  put32(body, 42, little);  // request_id
  body.push_back(std::byte{response_expected ? uint8_t{1} : uint8_t{0}});
  body.resize(body.size() + 20, std::byte{0});
  return message(0, 0, body, little);
}

// Feeds `stream` in chunks of `chunk` bytes; returns the pieces.
std::vector<GiopFramer::Piece> feed(const Bytes& stream, size_t chunk) {
  GiopFramer f;
  std::vector<GiopFramer::Piece> out;
  size_t off = 0;
  while (off < stream.size()) {
    const size_t n = std::min(chunk, stream.size() - off);
    GiopFramer::Piece p = f.next(stream.data() + off, n);
    out.push_back(p);
    if (!p.valid || p.len == 0) break;
    off += p.len;
  }
  return out;
}

struct Call {
  size_t bytes;
  bool expects_reply;
};
std::vector<Call> calls_of(const std::vector<GiopFramer::Piece>& pieces) {
  std::vector<Call> calls;
  size_t bytes = 0;
  for (const auto& p : pieces) {
    REQUIRE(p.valid);
    bytes += p.len;
    if (p.ends_call) {
      calls.push_back({bytes, p.expects_reply});
      bytes = 0;
    }
  }
  return calls;
}

}  // namespace

TEST_CASE("giop framer: GIOP 1.2 requests are answered unless oneway", "[giop_framer]") {
  Bytes s = request_12(3, 100);  // SYNC_WITH_TARGET
  Bytes oneway = request_12(0, 10);
  s.insert(s.end(), oneway.begin(), oneway.end());
  const size_t chunk = GENERATE(1, 7, 12, 13, 64, 100000);
  auto calls = calls_of(feed(s, chunk));
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].bytes == 12 + 5 + 100);
  CHECK(calls[0].expects_reply);
  CHECK(calls[1].bytes == 12 + 5 + 10);
  CHECK_FALSE(calls[1].expects_reply);
}

TEST_CASE("giop framer: GIOP 1.0 requests past their service contexts", "[giop_framer]") {
  const bool little = GENERATE(true, false);
  const int contexts = GENERATE(0, 1, 3);
  Bytes s = request_10(false, contexts, little);
  Bytes answered = request_10(true, contexts, little);
  s.insert(s.end(), answered.begin(), answered.end());
  auto calls = calls_of(feed(s, 100000));
  REQUIRE(calls.size() == 2);
  CHECK_FALSE(calls[0].expects_reply);
  CHECK(calls[1].expects_reply);
}

TEST_CASE("giop framer: a fragmented request is one call ending with its last fragment",
          "[giop_framer]") {
  Bytes s = request_12(3, 50, /*more=*/true);
  Bytes frag_body(60, std::byte{1});
  Bytes f1 = message(2, 7, frag_body, true, /*more=*/true);
  Bytes f2 = message(2, 7, frag_body, true, /*more=*/false);
  s.insert(s.end(), f1.begin(), f1.end());
  s.insert(s.end(), f2.begin(), f2.end());
  const size_t chunk = GENERATE(5, 72, 100000);
  auto calls = calls_of(feed(s, chunk));
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].bytes == s.size());
  CHECK(calls[0].expects_reply);
}

TEST_CASE("giop framer: replies, locate requests and close are told apart", "[giop_framer]") {
  Bytes s = message(2, 1, Bytes(30, std::byte{0}));     // Reply
  Bytes loc = message(2, 3, Bytes(8, std::byte{0}));    // LocateRequest
  Bytes close = message(2, 5, Bytes{});                 // CloseConnection, empty body
  s.insert(s.end(), loc.begin(), loc.end());
  s.insert(s.end(), close.begin(), close.end());
  GiopFramer f;
  auto p1 = f.next(s.data(), s.size());
  CHECK(p1.len == 42);
  CHECK(p1.ends_call);
  CHECK_FALSE(p1.expects_reply);
  auto p2 = f.next(s.data() + 42, s.size() - 42);
  CHECK(p2.len == 20);
  CHECK(p2.expects_reply);
  auto p3 = f.next(s.data() + 62, s.size() - 62);
  CHECK(p3.len == 12);
  CHECK(p3.ends_call);
  CHECK(p3.close);
}

TEST_CASE("giop framer: bytes that are not GIOP are reported, not guessed", "[giop_framer]") {
  GiopFramer f;
  Bytes junk(40, std::byte{0x42});
  CHECK_FALSE(f.next(junk.data(), junk.size()).valid);
  GiopFramer g;
  Bytes bad_version = message(2, 0, Bytes(5, std::byte{0}));
  bad_version[5] = std::byte{9};
  CHECK_FALSE(g.next(bad_version.data(), bad_version.size()).valid);
  GiopFramer h;
  Bytes stray_fragment = message(2, 7, Bytes(4, std::byte{0}));
  CHECK_FALSE(h.next(stray_fragment.data(), stray_fragment.size()).valid);
}
