// Exported regions, RDMA cookies and apertures: writes land, bad cookies write nothing.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "clan_emul/aperture.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/region.hpp"
#include "clan_emul/shared_memory.hpp"
#include "clan_emul/tripwire.hpp"
#include "support/child_process.hpp"

using namespace clan;

namespace {
std::unique_ptr<Nic> open_nic(NicConfig c = {}) {
  auto n = Nic::open(std::move(c));
  REQUIRE(n.ok());
  return std::move(n.value());
}
bool all_zero(const std::byte* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != std::byte{0}) return false;
  return true;
}
}  // namespace

TEST_CASE("pio write through an imported cookie lands in the exporter's memory", "[region]") {
  auto a = open_nic(), b = open_nic();
  auto r = a->export_region(4096);
  REQUIRE(r.ok());
  auto ap = b->import(r->cookie());
  REQUIRE(ap.ok());
  const char msg[] = "hello clan";
  REQUIRE(ap->write(100, msg, sizeof msg) == Errc::kOk);
  CHECK(std::memcmp(r->data() + 100, msg, sizeof msg) == 0);
  REQUIRE(ap->write_word(8, 0x1122334455667788ULL) == Errc::kOk);
  uint64_t w;
  std::memcpy(&w, r->data() + 8, 8);
  CHECK(w == 0x1122334455667788ULL);
}

TEST_CASE("a write of no bytes needs no buffer and writes nothing", "[region]") {
  auto a = open_nic(), b = open_nic();
  auto r = a->export_region(4096);
  auto ap = b->import(r->cookie());
  REQUIRE(ap.ok());
  CHECK(ap->write(64, nullptr, 0) == Errc::kOk);
  CHECK(ap->write(4096, nullptr, 0) == Errc::kOk);
  CHECK(all_zero(r->data(), r->size()));
}

TEST_CASE("writes outside the aperture are rejected and write nothing", "[region]") {
  auto a = open_nic(), b = open_nic();
  auto r = a->export_region(4096);
  auto ap = b->import(r->cookie());
  REQUIRE(ap.ok());
  std::vector<char> big(5000, 'x');
  CHECK(ap->write(0, big.data(), big.size()) == Errc::kOutOfRange);
  CHECK(ap->write(4090, big.data(), 7) == Errc::kOutOfRange);
  CHECK(ap->write(SIZE_MAX, big.data(), 2) == Errc::kOutOfRange);
  CHECK(ap->write_word(4096, 1) == Errc::kOutOfRange);
  CHECK(ap->write_word(3, 1) == Errc::kInvalidArgument);
  // The prefetch hint writes nothing, in range or out of it.
  ap->prefetch_for_write(0, 4096);
  ap->prefetch_for_write(4000, 5000);
  ap->prefetch_for_write(SIZE_MAX, 2);
  CHECK(all_zero(r->data(), r->size()));
  ap->reset();
  ap->prefetch_for_write(0, 64);  // closed: a no-op
}

TEST_CASE("a peer's descriptor of a region cannot change its size, and an unsealed memfd is refused",
          "[region][cookie]") {
  auto m = SharedMemory::create("clan-test-sealed", 4096);
  REQUIRE(m.ok());
  // What a peer holds: the memfd opened read-write through /proc.
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/fd/%d", m->fd());
  const int peer_fd = open(path, O_RDWR | O_CLOEXEC);
  REQUIRE(peer_fd >= 0);
  errno = 0;
  CHECK(ftruncate(peer_fd, 0) != 0);
  CHECK(errno == EPERM);
  CHECK(ftruncate(peer_fd, 8192) != 0);
  CHECK(fcntl(peer_fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE) != 0);
  close(peer_fd);
  m->data()[4095] = std::byte{7};  // still all there (a shrunk file would raise SIGBUS)
  CHECK(m->data()[4095] == std::byte{7});
  auto mapped = SharedMemory::open_peer(getpid(), m->fd(), "clan-test-sealed", 4096);
  REQUIRE(mapped.ok());
  CHECK(mapped->data()[4095] == std::byte{7});

  // A memfd its owner could still shrink is not mapped.
  const int unsealed = memfd_create("clan-test-unsealed", MFD_CLOEXEC);
  REQUIRE(unsealed >= 0);
  REQUIRE(ftruncate(unsealed, 4096) == 0);
  auto refused = SharedMemory::open_peer(getpid(), unsealed, "clan-test-unsealed", 4096);
  CHECK(refused.error() == Errc::kCorrupt);
  close(unsealed);
}

TEST_CASE("forged cookies are rejected on import", "[region][cookie]") {
  auto a = open_nic(), b = open_nic();
  auto r = a->export_region(4096);
  RdmaCookie good = r->cookie();

  SECTION("wrong secret") {
    RdmaCookie c = good;
    c.secret[1] ^= 1;
    CHECK(b->import(c).error() == Errc::kForgedCookie);
  }
  SECTION("region index beyond the table") {
    RdmaCookie c = good;
    c.region = 1u << 30;
    CHECK(b->import(c).error() == Errc::kForgedCookie);
  }
  SECTION("length larger than the region") {
    RdmaCookie c = good;
    c.length = r->size() + 4096;
    CHECK(b->import(c).error() == Errc::kForgedCookie);
  }
  SECTION("unknown NIC id") {
    RdmaCookie c = good;
    c.nic_id ^= 0xdead;
    CHECK(b->import(c).error() == Errc::kForgedCookie);
  }
  SECTION("no such process") {
    RdmaCookie c = good;
    c.pid = 0x3fffffff;
    CHECK(b->import(c).error() == Errc::kForgedCookie);
  }
  CHECK(b->imports_in_use() == 0);
  CHECK(all_zero(r->data(), r->size()));
}

TEST_CASE("revocation stops writes through existing apertures and new imports", "[region][cookie]") {
  auto a = open_nic(), b = open_nic();
  auto r = a->export_region(4096);
  RdmaCookie old_cookie = r->cookie();
  auto ap = b->import(old_cookie);
  REQUIRE(ap.ok());
  REQUIRE(ap->write_word(0, 7) == Errc::kOk);

  r->revoke();
  CHECK(ap->write_word(0, 8) == Errc::kRevokedCookie);
  CHECK(ap->write(16, "x", 1) == Errc::kRevokedCookie);
  CHECK(ap->check() == Errc::kRevokedCookie);
  CHECK(b->import(old_cookie).error() == Errc::kRevokedCookie);
  uint64_t w;
  std::memcpy(&w, r->data(), 8);
  CHECK(w == 7);
  CHECK(all_zero(r->data() + 8, r->size() - 8));

  SECTION("a reissued cookie works and the old one stays dead") {
    RdmaCookie fresh = r->reissue();
    CHECK(ap->write_word(0, 9) == Errc::kStaleCookie);
    CHECK(b->import(old_cookie).error() == Errc::kStaleCookie);
    auto ap2 = b->import(fresh);
    REQUIRE(ap2.ok());
    CHECK(ap2->write_word(0, 10) == Errc::kOk);
    std::memcpy(&w, r->data(), 8);
    CHECK(w == 10);
  }
}

TEST_CASE("a freed region's cookie is stale, also after its slot is reused", "[region][cookie]") {
  NicConfig small;
  small.max_regions = 1;
  auto a = open_nic(small), b = open_nic();
  auto r = a->export_region(4096);
  RdmaCookie c = r->cookie();
  auto ap = b->import(c);
  REQUIRE(ap.ok());
  r->reset();
  CHECK(ap->write_word(0, 1) == Errc::kStaleCookie);
  CHECK(b->import(c).error() == Errc::kStaleCookie);
  auto r2 = a->export_region(4096);  // same slot, next generation
  REQUIRE(r2.ok());
  REQUIRE(r2->index() == c.region);
  CHECK(ap->write_word(0, 1) == Errc::kStaleCookie);
  CHECK(b->import(c).error() == Errc::kStaleCookie);
  CHECK(all_zero(r2->data(), r2->size()));
}

TEST_CASE("running out of regions, imports or tripwires is a clear error", "[region][resources]") {
  NicConfig c;
  c.max_regions = 3;
  c.max_imports = 2;
  c.max_tripwires = 2;
  auto a = open_nic(c), b = open_nic(c);
  std::vector<Region> regions;
  for (int i = 0; i < 3; ++i) {
    auto r = a->export_region(4096);
    REQUIRE(r.ok());
    regions.push_back(std::move(r.value()));
  }
  CHECK(a->export_region(4096).error() == Errc::kNoResources);
  CHECK_THAT(error_message(Errc::kNoResources), Catch::Contains("no region left to export (3 in use, limit 3)"));
  CHECK(a->regions_in_use() == 3);

  auto i1 = b->import(regions[0].cookie());
  auto i2 = b->import(regions[1].cookie());
  REQUIRE((i1.ok() && i2.ok()));
  CHECK(b->import(regions[2].cookie()).error() == Errc::kNoResources);
  CHECK_THAT(error_message(Errc::kNoResources),
             Catch::Contains("no imported aperture left (2 in use, limit 2)"));
  i1->reset();
  CHECK(b->import(regions[2].cookie()).ok());

  auto t1 = a->arm_tripwire(regions[0], 0);
  auto t2 = a->arm_tripwire(regions[0], 8);
  REQUIRE((t1.ok() && t2.ok()));
  CHECK(a->arm_tripwire(regions[1], 0).error() == Errc::kNoResources);
  CHECK_THAT(error_message(Errc::kNoResources), Catch::Contains("no tripwire left (2 in use, limit 2)"));
  CHECK(a->tripwires_in_use() == 2);
  t1->reset();
  CHECK(a->arm_tripwire(regions[1], 0).ok());

  regions.pop_back();
  CHECK(a->export_region(4096).ok());
}

// A long-lived server imports from every client it ever served: what it
// keeps of a peer NIC must go with the last aperture into it.
TEST_CASE("a peer NIC is forgotten once no aperture imports from it", "[region][resources]") {
  auto server = open_nic();
  REQUIRE(server->peers_mapped() == 0);
  for (int round = 0; round < 3; ++round) {
    auto client = open_nic();
    auto r1 = client->export_region(4096);
    auto r2 = client->export_region(4096);
    REQUIRE((r1.ok() && r2.ok()));
    auto a1 = server->import(r1->cookie());
    auto a2 = server->import(r2->cookie());
    REQUIRE((a1.ok() && a2.ok()));
    CHECK(server->peers_mapped() == 1);
    a1->reset();
    CHECK(server->peers_mapped() == 1);  // a2 still maps it
    auto again = server->import(r1->cookie());
    REQUIRE(again.ok());
    CHECK(server->peers_mapped() == 1);
    a2->reset();
    again->reset();
    CHECK(server->peers_mapped() == 0);
  }
  // A refused import keeps nothing either.
  auto client = open_nic();
  auto r = client->export_region(4096);
  REQUIRE(r.ok());
  RdmaCookie forged = r->cookie();
  forged.secret[0] ^= 1;
  CHECK(server->import(forged).error() == Errc::kForgedCookie);
  CHECK(server->peers_mapped() == 0);
}

TEST_CASE("invalid NIC configurations are refused", "[region][resources]") {
  NicConfig c;
  c.max_tripwires = 0;
  CHECK(Nic::open(c).error() == Errc::kInvalidArgument);
  c = {};
  c.event_queue_capacity = 1000;  // not a power of two
  CHECK(Nic::open(c).error() == Errc::kInvalidArgument);
}

TEST_CASE("a cookie passed to another process lets it write, a forged one does not",
          "[region][cookie][multiprocess]") {
  auto a = open_nic();
  auto r = a->export_region(4096);
  RdmaCookie good = r->cookie();
  RdmaCookie forged = good;
  forged.secret[0] ^= 0x40;
  test::ChildProcess child([&] {
    auto nic = Nic::open({});
    if (!nic) return 1;
    if ((*nic)->import(forged).error() != Errc::kForgedCookie) return 2;
    auto ap = (*nic)->import(good);
    if (!ap) return 3;
    return ap->write(64, "from the child", 15) == Errc::kOk ? 0 : 4;
  });
  REQUIRE(child.wait() == 0);
  CHECK(std::memcmp(r->data() + 64, "from the child", 15) == 0);
  CHECK(all_zero(r->data(), 64));
}
