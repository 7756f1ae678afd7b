// The remote wire against a hostile peer: a bare libfabric endpoint
// (raw_fi_peer.hpp) connected to a wired NIC, writing with a wrong key,
// sending notices that name what its write did not touch, garbage control
// messages, or vanishing mid-stream. Whatever it does, only its own
// connection suffers: nothing lands outside what its key opens, and a
// well-behaved writer's link to the same NIC keeps working.
#include <catch2/catch.hpp>

#include <array>
#include <cstring>
#include <vector>

#include "tests/clan_emul/hostile_support.hpp"
#include "tests/clan_emul/raw_fi_peer.hpp"

using namespace clan;
using namespace std::chrono_literals;
using test::eventually;
using test::GoodWriter;
using test::RawFiPeer;
using wire::encode_notice;

namespace {

std::unique_ptr<RawFiPeer> hostile_to(const GoodWriter& g) {
  return test::in_peer_netns([&] { return RawFiPeer::connect(g.pair.owner->wire_address(), Deadline::after(10s)); });
}

}  // namespace

TEST_CASE("a hostile write with a wrong key ends only its own connection", "[wire][hostile]") {
  GoodWriter g;
  REQUIRE(g.still_works());
  auto hostile = hostile_to(g);
  REQUIRE(hostile);
  REQUIRE(eventually([&] { return g.stats().links_accepted == 2; }));
  const uint64_t broken = g.stats().links_broken;
  const uint64_t junk = 0xbadbadbadbadbad0;
  // A key never issued, then the real key with one bit off.
  REQUIRE(hostile->write(0x1234, 0, &junk, sizeof junk, encode_notice(g.region(), 0, 8)));
  CHECK(hostile->wait_closed(Deadline::after(10s)));
  auto second = hostile_to(g);
  REQUIRE(second);
  REQUIRE(second->write(g.key() ^ 1, 8, &junk, sizeof junk, encode_notice(g.region(), 8, 8)));
  CHECK(second->wait_closed(Deadline::after(10s)));
  CHECK(eventually([&] { return g.stats().links_broken == broken + 2; }));
  CHECK(g.stats().registrations == 1);
  CHECK(test::all_zero(g.pair.region.data(), g.pair.region.size(), 0, 8));
  CHECK(g.tripwire.fired() == 1);
  CHECK(g.still_works());
  CHECK(g.still_works());
}

TEST_CASE("a forged cookie over a raw link is refused and its key opens nothing", "[wire][hostile]") {
  GoodWriter g;
  REQUIRE(g.still_works());
  auto hostile = hostile_to(g);
  REQUIRE(hostile);
  RdmaCookie forged = g.pair.region.cookie();
  forged.secret[1] ^= 0x10;
  CHECK(hostile->import(forged, Deadline::after(10s)) == Errc::kForgedCookie);
  CHECK(g.stats().registrations == 1);
  const uint64_t key = wire::registration_key(forged.secret[0], forged.secret[1], forged.region, forged.generation);
  const uint64_t junk = 0xf00d;
  REQUIRE(hostile->write(key, 0, &junk, 8, encode_notice(g.region(), 0, 8)));
  CHECK(hostile->wait_closed(Deadline::after(10s)));
  CHECK(g.pair.word(0) != junk);
  CHECK(g.still_works());
}

TEST_CASE("a wrong-key write in the middle of a stream stops the stream there", "[wire][hostile]") {
  GoodWriter g;
  auto hostile = hostile_to(g);
  REQUIRE(hostile);
  REQUIRE(hostile->import(g.pair.region.cookie(), Deadline::after(10s)) == Errc::kOk);
  const uint64_t one = 1, two = 2;
  REQUIRE(hostile->write(g.key(), 8, &one, 8, encode_notice(g.region(), 8, 8)));
  REQUIRE(hostile->write(g.key() + 1, 16, &two, 8, encode_notice(g.region(), 16, 8)));
  // Whatever it posts after the bad write never lands.
  (void)hostile->write(g.key(), 24, &two, 8, encode_notice(g.region(), 24, 8));
  CHECK(hostile->wait_closed(Deadline::after(10s)));
  CHECK(eventually([&] { return g.pair.word(8) == 1; }));
  CHECK(g.still_works());
  CHECK(g.pair.word(16) == 0);
  CHECK(g.pair.word(24) == 0);
}

TEST_CASE("notices beyond the key's registration are dropped, nothing delivered", "[wire][hostile]") {
  GoodWriter g;
  REQUIRE(g.still_works());
  Region other = std::move(g.pair.owner->export_region(4096).value());
  auto other_tw = g.pair.owner->arm_tripwire(other, 0);
  REQUIRE(other_tw.ok());
  auto hostile = hostile_to(g);
  REQUIRE(hostile);
  REQUIRE(hostile->import(g.pair.region.cookie(), Deadline::after(10s)) == Errc::kOk);
  const uint64_t dropped = g.stats().notices_dropped;
  const uint64_t value = 0xabcdef;
  const size_t size = g.pair.region.size();
  const uint32_t region = g.region();
  // Each write lands in the shadow (the key and range are right); its
  // notice is wrong: another region, an offset or length beyond the end.
  const std::array<wire::WriteNotice, 6> notices = {
      encode_notice(other.cookie().region, 64, 8), encode_notice(0xfff0, 64, 8),
      encode_notice(region, size, 8),              encode_notice(region, size - 4, 8),
      encode_notice(region, 64, wire::kMaxNoticeLength), encode_notice(region, 0xffff'fff0, 0x20),
  };
  for (const wire::WriteNotice& notice : notices) REQUIRE(hostile->write(g.key(), 64, &value, 8, notice));
  // A good write after them on the same link: once it lands, they were all seen.
  REQUIRE(hostile->write(g.key(), 128, &value, 8, encode_notice(region, 128, 8)));
  REQUIRE(eventually([&] { return g.pair.word(128) == value; }));
  CHECK(g.stats().notices_dropped == dropped + notices.size());
  CHECK(g.pair.word(64) == 0);
  CHECK(test::all_zero(g.pair.region.data() + 8, size - 8, 120, 128));
  CHECK(test::all_zero(other.data(), other.size()));
  CHECK(other_tw->fired() == 0);
  CHECK(g.tripwire.fired() == 1);
  CHECK(!hostile->closed());
  CHECK(g.still_works());
}

TEST_CASE("writes beyond the registration end the hostile connection, nothing written", "[wire][hostile]") {
  GoodWriter g;
  auto hostile = hostile_to(g);
  REQUIRE(hostile);
  REQUIRE(hostile->import(g.pair.region.cookie(), Deadline::after(10s)) == Errc::kOk);
  std::vector<unsigned char> data(64, 0x77);
  const size_t size = g.pair.region.size();
  REQUIRE(hostile->write(g.key(), size - 32, data.data(), data.size(), encode_notice(g.region(), size - 32, 32)));
  CHECK(hostile->wait_closed(Deadline::after(10s)));
  CHECK(test::all_zero(g.pair.region.data(), size));
  CHECK(g.still_works());
}

TEST_CASE("garbage and wrong-length control messages are dropped and counted", "[wire][hostile]") {
  GoodWriter g;
  REQUIRE(g.still_works());
  auto hostile = hostile_to(g);
  REQUIRE(hostile);
  const uint64_t dropped = g.stats().messages_dropped;
  const auto good = wire::encode_wire_message(wire::WireMessage{wire::WireOp::kImportRequest, Errc::kOk, 9,
                                                                g.pair.region.cookie()});
  std::vector<std::vector<std::byte>> bad;
  bad.emplace_back(wire::kWireMessageBytes, std::byte{0xaa});              // no magic
  bad.emplace_back(good.begin(), good.end() - 1);                           // one short
  bad.emplace_back(good.begin(), good.end()).push_back(std::byte{0});       // one long
  bad.emplace_back(good.begin(), good.begin() + 8);                         // a header only
  bad.emplace_back(good.begin(), good.end())[4] = std::byte{7};             // no such op
  bad.emplace_back(good.begin(), good.end())[5] = std::byte{0xee};          // no such status
  bad.emplace_back(good.begin(), good.end())[20] = std::byte{1};            // padding not zero
  for (const auto& m : bad) REQUIRE(hostile->send_bytes(m.data(), m.size()));
  REQUIRE(hostile->send_bytes(good.data(), 0));
  // A reply nobody asked for.
  REQUIRE(hostile->send_message(wire::WireMessage{wire::WireOp::kImportReply, Errc::kOk, 12345, {}}));
  // Control messages are handled in order: once this is answered, all were seen.
  CHECK(hostile->import(g.pair.region.cookie(), Deadline::after(10s)) == Errc::kOk);
  CHECK(g.stats().messages_dropped == dropped + bad.size() + 2);
  CHECK(g.stats().links_broken == 0);
  CHECK(g.still_works());
}

TEST_CASE("a control message larger than a receive slot ends only its sender's link", "[wire][hostile]") {
  GoodWriter g;
  REQUIRE(g.still_works());
  auto hostile = hostile_to(g);
  REQUIRE(hostile);
  std::vector<std::byte> big(4096, std::byte{0x5c});
  REQUIRE(hostile->send_bytes(big.data(), big.size()));
  CHECK(hostile->wait_closed(Deadline::after(10s)));
  CHECK(eventually([&] { return g.stats().links_broken == 1; }));
  CHECK(g.still_works());
}

TEST_CASE("a hostile peer that vanishes mid-stream leaves the owner working", "[wire][hostile]") {
  GoodWriter g(1 << 20);
  REQUIRE(g.still_works());
  auto hostile = hostile_to(g);
  REQUIRE(hostile);
  REQUIRE(hostile->import(g.pair.region.cookie(), Deadline::after(10s)) == Errc::kOk);
  std::vector<unsigned char> chunk(60000, 0x3c);
  for (size_t i = 0; i < 16; ++i) {
    const size_t at = 4096 + i * chunk.size();
    REQUIRE(hostile->write(g.key(), at, chunk.data(), chunk.size(), encode_notice(g.region(), at, chunk.size())));
  }
  (void)hostile->send_message(wire::WireMessage{wire::WireOp::kImportRequest, Errc::kOk, 77,
                                                g.pair.region.cookie()});
  hostile->vanish();
  CHECK(eventually([&] { return g.stats().links_broken == 1; }));
  CHECK(g.still_works());
  // Another hostile peer that vanishes before doing anything at all.
  auto quiet = hostile_to(g);
  REQUIRE(quiet);
  quiet.reset();
  CHECK(eventually([&] { return g.stats().links_broken == 2; }));
  CHECK(g.still_works());
  CHECK(g.stats().links_accepted == 3);
}
