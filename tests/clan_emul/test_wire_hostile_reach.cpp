// The remote wire against a hostile peer that holds a real key (it imported
// a cookie it was given) and tries to reach past it: a notice naming a
// region that another writer's import registered, and a flood of import
// requests whose replies it never reads; or a NIC of another host claiming
// a NIC id of this host. A key opens its own region only, no peer can stall
// the NIC's delivery to the others, and no peer takes a local NIC's imports.
#include <catch2/catch.hpp>
#include <cctype>

#include "tests/clan_emul/hostile_support.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/nic_locator.hpp"
#include "tests/clan_emul/raw_fi_peer.hpp"

using namespace clan;
using namespace std::chrono_literals;
using test::eventually;
using test::GoodWriter;
using test::RawFiPeer;
using test::WirePair;
using wire::encode_notice;

namespace {

// Each reply the NIC queues costs it a few hundred bytes: this many of them
// unread is tens of megabytes if nothing bounds them.
constexpr size_t kFloodRequests = 200000;
constexpr long kBoundKiB = 16 * 1024;

}  // namespace

TEST_CASE("a key for one region cannot deliver into another registered region", "[wire][hostile]") {
  GoodWriter g;
  // A second region, imported over the wire by the good writer and written once.
  Region other = std::move(g.pair.owner->export_region(4096).value());
  auto other_tw = g.pair.owner->arm_tripwire(other, 0);
  REQUIRE(other_tw.ok());
  auto other_ap = g.pair.writer->import(other.cookie());
  REQUIRE(other_ap.ok());
  REQUIRE(other_ap->write_word(0, 7) == Errc::kOk);
  REQUIRE(other_tw->wait([&] { return other_tw->fired() == 1; }, Deadline::after(10s)) == Errc::kOk);
  // Its consumer on the owner's host takes the word and clears it.
  std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(other.data())).store(0);

  auto hostile = RawFiPeer::connect(g.pair.owner->wire_address(), Deadline::after(10s));
  REQUIRE(hostile);
  REQUIRE(hostile->import(g.pair.region.cookie(), Deadline::after(10s)) == Errc::kOk);
  const uint64_t dropped = g.stats().notices_dropped;
  const uint64_t mine = 1;
  // A write into its own region whose notice names the other one.
  REQUIRE(hostile->write(g.key(), 0, &mine, 8, encode_notice(other.cookie().region, 0, 8)));
  REQUIRE(hostile->write(g.key(), 8, &mine, 8, encode_notice(g.region(), 8, 8)));
  REQUIRE(eventually([&] { return g.pair.word(8) == 1; }));
  // The other region's shadow still holds the 7; delivering it again would
  // replay a consumed word and fire its tripwire a second time.
  CHECK(std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(other.data())).load() == 0);
  CHECK(other_tw->fired() == 1);
  CHECK(g.stats().notices_dropped == dropped + 1);
  CHECK(g.still_works());
}

TEST_CASE("a peer that never reads its import replies does not make the NIC hoard them", "[wire][hostile]") {
  // The hostile peer runs in a child process, so that what this process
  // holds is the NIC's alone; the child is forked before any NIC exists.
  test::ForkedPeer child([](const std::string& address) {
    try {
      test::enter_peer_netns();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    auto hostile = RawFiPeer::connect(address, Deadline::after(10s));
    if (!hostile) return std::string("no connection");
    hostile->set_deaf(true);
    uint64_t sent = 0;
    while (sent < kFloodRequests &&
           hostile->send_message(wire::WireMessage{wire::WireOp::kImportRequest, Errc::kOk, sent + 1, {}})) {
      ++sent;
    }
    // Then it reads: once the last reply is in, the NIC handled every request.
    hostile->set_deaf(false);
    if (!hostile->await_reply(sent, Deadline::after(60s))) return std::string("no last reply");
    return std::to_string(sent);
  });
  GoodWriter g;
  REQUIRE(g.still_works());
  const long before = test::resident_kib();
  REQUIRE(child.start(g.pair.owner->wire_address()));
  const auto sent = child.result(Deadline::after(60s));
  REQUIRE(sent.has_value());
  INFO("import requests the peer sent and had answered: " << *sent);
  CHECK(std::isdigit(static_cast<unsigned char>(sent->front())));
  // The replies waiting for a peer that does not read are bounded by the
  // link, not by the peer's patience.
  const long grown = test::resident_kib() - before;
  INFO("resident KiB grown: " << grown);
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer's quarantine holds freed memory: the figure says nothing.
  (void)grown;
#else
  CHECK(grown < kBoundKiB);
#endif
  CHECK(g.still_works());
}

TEST_CASE("a NIC of another host that claims a local NIC's id takes none of its imports", "[wire][hostile]") {
  // The local NIC lives in a child process (forked before any NIC exists)
  // and hands over its region's cookie.
  test::ForkedPeer local([](const std::string&) {
    auto nic = Nic::open(NicConfig{});
    if (!nic) return std::string("no NIC");
    auto region = nic.value()->export_region(4096);
    if (!region) return std::string("no region");
    const RdmaCookie c = region.value().cookie();
    new Region(std::move(region.value()));  // both kept until the child is killed
    nic.value().release();
    return test::hex_of(&c, sizeof c);
  });
  WirePair p;
  REQUIRE(local.start("go"));
  const auto hex = local.result(Deadline::after(30s));
  REQUIRE(hex);
  RdmaCookie cookie;
  REQUIRE(test::bytes_of(*hex, &cookie, sizeof cookie));
  // The writer is told that the local NIC's id lives at the owner's wire.
  (void)p.writer->connect_wire(cookie.nic_id, p.owner->wire_address(), Deadline::after(10s));
  auto a = p.writer->import(cookie);
  REQUIRE(a.ok());
  CHECK(a.value().write_word(0, 0x10ca1) == Errc::kOk);
  CHECK(p.owner->wire()->stats().registrations == 0);
}

TEST_CASE("a NIC of another host that claims this NIC's own id is refused", "[wire][hostile]") {
  WirePair p;
  NicLocator liar = locate(*p.owner);
  liar.nic_id = p.writer->id();
  liar.boot_id[0] ^= 1;  // another host
  CHECK(reach(*p.writer, liar, Deadline::after(10s)) == Errc::kForgedCookie);
  CHECK(last_error_message().find("claims") != std::string::npos);
}
