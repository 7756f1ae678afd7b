#include <catch2/catch.hpp>

#include "omnitransport/header.hpp"
#include "wire.hpp"

namespace otp::test {

TEST_CASE("header: encode/decode round trip, size in network byte order", "[otp][header]") {
  Header h;
  h.type = PacketType::kComplete;
  h.exactly_once = true;
  h.size = 0x1234;
  h.call_seq = 200;
  h.pkt_seq = 255;
  h.fragmented = true;
  std::vector<std::byte> b(0x1234);
  encode(h, b.data());
  CHECK(std::to_integer<int>(b[2]) == 0x12);
  CHECK(std::to_integer<int>(b[3]) == 0x34);
  CHECK(std::to_integer<int>(b[7]) == 0);
  Header d;
  REQUIRE(decode(b.data(), b.size(), d) == Errc::kOk);
  CHECK(d == h);
  for (auto t : {PacketType::kPartial, PacketType::kComplete, PacketType::kCallAck, PacketType::kNack,
                 PacketType::kReclaim, PacketType::kReclaimAck}) {
    auto p = pkt(t, 1, 2, false, 3);
    REQUIRE(decode(p.data(), p.size(), d) == Errc::kOk);
    CHECK(d.type == t);
    CHECK(d.size == 11);
  }
}

TEST_CASE("header: malformed datagrams are rejected with a clear error", "[otp][header]") {
  Header d;
  auto good = pkt(PacketType::kPartial, 1, 1, true, 4);
  SECTION("truncated") {
    for (size_t n = 0; n < kHeaderSize; ++n) CHECK(decode(good.data(), n, d) == Errc::kTruncated);
    CHECK(decode(nullptr, 0, d) == Errc::kTruncated);
  }
  SECTION("size field != datagram length") {
    CHECK(decode(good.data(), good.size() - 1, d) == Errc::kSizeMismatch);
    good.push_back(std::byte{0});
    CHECK(decode(good.data(), good.size(), d) == Errc::kSizeMismatch);
  }
  SECTION("unknown type") {
    for (int t : {0, 7, 255}) {
      good[0] = std::byte(t);
      CHECK(decode(good.data(), good.size(), d) == Errc::kUnknownType);
    }
  }
  SECTION("bad bool") {
    good[1] = std::byte{2};
    CHECK(decode(good.data(), good.size(), d) == Errc::kBadBool);
    good[1] = std::byte{1};
    good[6] = std::byte{0xFF};
    CHECK(decode(good.data(), good.size(), d) == Errc::kBadBool);
  }
  SECTION("nonzero padding") {
    good[7] = std::byte{1};
    CHECK(decode(good.data(), good.size(), d) == Errc::kBadPadding);
  }
  CHECK(std::string(to_string(Errc::kBadPadding)) == "nonzero padding byte");
}

TEST_CASE("header: 8-bit sequence arithmetic survives 255 -> 0", "[otp][header]") {
  CHECK(seq_diff(0, 255) == 1);
  CHECK(seq_diff(255, 0) == -1);
  CHECK(seq_lt(255, 0));
  CHECK(seq_lt(250, 3));
  CHECK_FALSE(seq_lt(3, 250));
  CHECK(seq_diff(127, 0) == 127);
  CHECK(seq_diff(128, 0) == -128);
  CHECK(seq_le(7, 7));
  uint8_t s = 250;
  for (int i = 0; i < 20; ++i) {
    const uint8_t n = static_cast<uint8_t>(s + 1);
    CHECK(seq_lt(s, n));
    CHECK(seq_diff(n, s) == 1);
    s = n;
  }
}

}  // namespace otp::test
