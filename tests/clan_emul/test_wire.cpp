// The remote wire (clan_emul/wire/): apertures onto a NIC of "another host"
// (another NIC with a wire, on 127.0.0.1) write over libfabric's tcp
// provider; the target delivers the writes and fires its tripwires; its
// cookies are checked before anything is registered; revocation closes the
// registration and a write with a dead key breaks only the writer's link.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <vector>

#include "clan_emul/dma_stream.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/event_queue.hpp"
#include "clan_emul/tripwire.hpp"
#include "tests/clan_emul/wire_pair.hpp"

using namespace clan;
using namespace std::chrono_literals;
using test::WirePair;

namespace {

// Waits (spinning through the wire's progress hook, then sleeping) until
// the tripwire has fired `count` times.
Errc wait_fired(const Tripwire& tw, uint32_t count) {
  return tw.wait([&] { return tw.fired() >= count; }, Deadline::after(10s));
}

}  // namespace

TEST_CASE("a NIC with a wire listens on the address it is given", "[wire]") {
  WirePair p;
  CHECK(p.owner->wire_address().rfind("127.0.0.1:", 0) == 0);
  CHECK(p.owner->wire_address() != "127.0.0.1:0");
  auto plain = Nic::open(NicConfig{});
  REQUIRE(plain.ok());
  CHECK(plain.value()->wire_address().empty());
  CHECK(plain.value()->connect_wire(p.owner->id(), p.owner->wire_address(), Deadline::after(1s)) ==
        Errc::kInvalidArgument);
}

TEST_CASE("a bad wire address or provider is refused with words", "[wire]") {
  NicConfig c = test::wire_nic_config("bad");
  c.wire.listen = "127.0.0.1:99999";
  CHECK(Nic::open(c).error() == Errc::kInvalidArgument);
  CHECK(last_error_message().find("99999") != std::string::npos);
  c.wire.listen = "127.0.0.1:0";
  c.wire.provider = "no-such-provider";
  auto r = Nic::open(c);
  REQUIRE(!r.ok());
  CHECK(last_error_message().find("no-such-provider") != std::string::npos);
}

TEST_CASE("writes over the wire land in order and fire the target's tripwires", "[wire]") {
  WirePair p;
  auto tw = p.owner->arm_tripwire(p.region, 64);
  REQUIRE(tw.ok());
  REQUIRE(p.link() == Errc::kOk);
  auto ap = p.writer->import(p.region.cookie());
  REQUIRE(ap.ok());
  CHECK(ap->remote());
  std::vector<unsigned char> data(40);
  std::iota(data.begin(), data.end(), 1);
  REQUIRE(ap->write(0, data.data(), data.size()) == Errc::kOk);  // no tripwire
  REQUIRE(ap->write_word(64, 0x1122334455667788) == Errc::kOk);  // after the data
  REQUIRE(wait_fired(tw.value(), 1) == Errc::kOk);
  CHECK(p.word(64) == 0x1122334455667788);
  CHECK(std::memcmp(p.region.data(), data.data(), data.size()) == 0);
  CHECK(tw->fired() == 1);
}

TEST_CASE("a write larger than the wire's notice goes in parts, all delivered", "[wire]") {
  WirePair p(256 * 1024);
  auto tw = p.owner->arm_tripwire(p.region, 200 * 1024 - 8);
  REQUIRE(tw.ok());
  REQUIRE(p.link() == Errc::kOk);
  auto ap = p.writer->import(p.region.cookie());
  REQUIRE(ap.ok());
  std::vector<unsigned char> data(200 * 1024);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 7 + 3);
  REQUIRE(ap->write(0, data.data(), data.size()) == Errc::kOk);
  REQUIRE(wait_fired(tw.value(), 1) == Errc::kOk);
  CHECK(std::memcmp(p.region.data(), data.data(), data.size()) == 0);
}

TEST_CASE("a remote write posts to the tripwire's event queue", "[wire]") {
  WirePair p;
  auto q = p.owner->create_event_queue();
  REQUIRE(q.ok());
  auto tw = p.owner->arm_tripwire(p.region, 8, &q.value(), 77);
  REQUIRE(tw.ok());
  REQUIRE(p.link() == Errc::kOk);
  auto ap = p.writer->import(p.region.cookie());
  REQUIRE(ap.ok());
  REQUIRE(ap->write_word(8, 5) == Errc::kOk);
  auto ev = q->wait(Deadline::after(10s));
  REQUIRE(ev.ok());
  CHECK(ev.value().user == 77);
  CHECK(p.word(8) == 5);
}

TEST_CASE("forged, stale and revoked cookies are refused over the wire and register nothing", "[wire]") {
  WirePair p;
  REQUIRE(p.link() == Errc::kOk);
  RdmaCookie forged = p.region.cookie();
  forged.secret[0] ^= 1;
  CHECK(p.writer->import(forged).error() == Errc::kForgedCookie);
  RdmaCookie beyond = p.region.cookie();
  beyond.length = p.region.size() + 4096;
  CHECK(p.writer->import(beyond).error() == Errc::kForgedCookie);
  Region other = std::move(p.owner->export_region(4096).value());
  const RdmaCookie old = other.cookie();
  other.revoke();
  CHECK(p.writer->import(old).error() == Errc::kRevokedCookie);
  other.reset();
  CHECK(p.writer->import(old).error() == Errc::kStaleCookie);
  CHECK(p.owner->wire()->stats().registrations == 0);
  CHECK(p.writer->imports_in_use() == 0);
  // The link survives refusals.
  CHECK(p.writer->import(p.region.cookie()).ok());
  CHECK(p.owner->wire()->stats().registrations == 1);
}

TEST_CASE("revocation closes the registration: a stale writer is refused and writes nothing", "[wire]") {
  WirePair p;
  auto tw = p.owner->arm_tripwire(p.region, 0);
  REQUIRE(tw.ok());
  REQUIRE(p.link() == Errc::kOk);
  auto ap = p.writer->import(p.region.cookie());
  REQUIRE(ap.ok());
  REQUIRE(ap->write_word(0, 1) == Errc::kOk);
  REQUIRE(wait_fired(tw.value(), 1) == Errc::kOk);
  p.region.revoke();
  CHECK(p.owner->wire()->stats().registrations == 0);
  // The exporter tells the writer, whose writes are then refused; one that
  // went before it heard is dropped at the target. Nothing lands.
  Errc e = Errc::kOk;
  for (int i = 0; i < 100000 && e == Errc::kOk; ++i) {
    e = ap->write_word(0, 2);
    if (e == Errc::kOk) e = ap->check();
    if (e == Errc::kOk) p.writer->wire()->poll();
  }
  CHECK(e == Errc::kRevokedCookie);
  CHECK(p.word(0) == 1);
  // A reissued cookie imports and works.
  const RdmaCookie fresh = p.region.reissue();
  auto again = p.writer->import(fresh);
  REQUIRE(again.ok());
  REQUIRE(again->write_word(0, 3) == Errc::kOk);
  REQUIRE(wait_fired(tw.value(), 2) == Errc::kOk);
  CHECK(p.word(0) == 3);
}

TEST_CASE("DMA through an aperture over the wire completes and lands", "[wire][dma]") {
  WirePair p(64 * 1024);
  auto tw = p.owner->arm_tripwire(p.region, 32 * 1024);
  REQUIRE(tw.ok());
  REQUIRE(p.link() == Errc::kOk);
  auto ap = p.writer->import(p.region.cookie());
  REQUIRE(ap.ok());
  std::vector<unsigned char> data(32 * 1024, 0x5a);
  DmaStream dma(*p.writer);
  auto t1 = dma.write(ap.value(), 0, data.data(), data.size());
  REQUIRE(t1.ok());
  auto t2 = dma.write_word(ap.value(), 32 * 1024, 9);
  REQUIRE(t2.ok());
  REQUIRE(dma.wait(t2.value(), Deadline::after(10s)) == Errc::kOk);
  REQUIRE(wait_fired(tw.value(), 1) == Errc::kOk);
  CHECK(p.word(32 * 1024) == 9);
  CHECK(std::memcmp(p.region.data(), data.data(), data.size()) == 0);
}

TEST_CASE("connecting to an address where no NIC listens is refused", "[wire]") {
  WirePair p;
  const std::string gone = p.owner->wire_address();
  const uint64_t id = p.owner->id();
  p.region.reset();
  p.owner.reset();
  Errc e = p.writer->connect_wire(id, gone, Deadline::after(10s));
  CHECK((e == Errc::kRefused || e == Errc::kClosed));
  CHECK(last_error_message().find(gone) != std::string::npos);
}

namespace {
size_t threads_of_this_process() {
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)entry;
    ++n;
  }
  return n;
}
}  // namespace

// The target's NIC logic copies from a registration's shadow under the
// wire's progress lock: that holds only if the provider writes the shadow
// only while the lock's holder reads the completion queue, with no
// progress thread of its own.
TEST_CASE("the provider runs no thread of its own: a wire is its one thread", "[wire]") {
  const size_t before = threads_of_this_process();
  {
    WirePair p;
    REQUIRE(p.link() == Errc::kOk);
    auto ap = p.writer->import(p.region.cookie());
    REQUIRE(ap.ok());
    std::vector<unsigned char> data(4096, 1);
    REQUIRE(ap->write(0, data.data(), data.size()) == Errc::kOk);
    // One per wired NIC; a sanitizer's runtime may start one of its own.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    CHECK(threads_of_this_process() <= before + 3);
#else
    CHECK(threads_of_this_process() == before + 2);
#endif
  }
}

TEST_CASE("a fence returns once every write before it has landed at the target", "[wire]") {
  WirePair p(1 << 20);
  REQUIRE(p.link() == Errc::kOk);
  auto a = p.writer->import(p.region.cookie());
  REQUIRE(a.ok());
  std::vector<uint8_t> block(64 * 1024);
  for (uint32_t round = 1; round <= 20; ++round) {
    std::fill(block.begin(), block.end(), static_cast<uint8_t>(round));
    REQUIRE(a.value().write(8, block.data(), block.size()) == Errc::kOk);
    REQUIRE(a.value().write_word(0, round) == Errc::kOk);
  }
  REQUIRE(a.value().fence(Deadline::after(10s)) == Errc::kOk);
  // Landed already: read without waiting.
  CHECK(p.word(0) == 20);
  CHECK(static_cast<uint8_t>(p.region.data()[8 + block.size() - 1]) == 20);
  // Onto a NIC of this process without a link, a fence has nothing to wait for.
  auto local = p.owner->import(p.region.cookie());
  REQUIRE(local.ok());
  CHECK(local.value().fence(Deadline::already_expired()) == Errc::kOk);
}
