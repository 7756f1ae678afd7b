// The remote wire against a target that stops taking anything (a stopped
// process, a hung host): a write whose first part went out cannot be
// withdrawn, so once the target has taken nothing for the wire's stall
// timeout the connection closes and the write fails in words; it never
// waits forever.
#include <catch2/catch.hpp>

#include <signal.h>

#include "clan_emul/aperture.hpp"
#include "clan_emul/error_detail.hpp"
#include "support/other_host.hpp"
#include "tests/clan_emul/hostile_support.hpp"

using namespace clan;
using namespace std::chrono_literals;

namespace {

constexpr size_t kRegionBytes = size_t{4} << 20;
// Far beyond what the sockets' buffers hold (tcp_rmem's largest is 32 MiB).
constexpr size_t kMaxTotal = size_t{1} << 30;
// Far beyond what the sockets' buffers and the provider's queue hold.
constexpr uint64_t kMaxSmallWrites = 20'000'000;

// The target in a child process posing as another host: a wired NIC and a
// region, handed over as "ADDRESS COOKIEHEX"; kept until the child is killed.
std::string target(const std::string&) {
  if (test::become_other_host() != 0) return "cannot pose as another host";
  auto nic = Nic::open(test::wire_nic_config("target"));
  if (!nic) return "no NIC";
  auto region = nic.value()->export_region(kRegionBytes);
  if (!region) return "no region";
  const RdmaCookie c = region.value().cookie();
  new Region(std::move(region.value()));
  const std::string address = nic.value()->wire_address();
  nic.value().release();
  return address + " " + test::hex_of(&c, sizeof c);
}

// The writer's NIC (stall timeout 300 ms) and its aperture onto the
// target's region, the target still running.
struct StallPair {
  test::ForkedPeer child{target};
  std::unique_ptr<Nic> writer;
  Aperture aperture;

  StallPair() {
    NicConfig c = test::wire_nic_config("writer");
    c.wire.stall_timeout = 300ms;
    writer = std::move(Nic::open(c).value());
    REQUIRE(child.start("go"));
    const auto line = child.result(Deadline::after(30s));
    REQUIRE(line);
    const size_t space = line->find(' ');
    REQUIRE(space != std::string::npos);
    RdmaCookie cookie;
    REQUIRE(test::bytes_of(line->substr(space + 1), &cookie, sizeof cookie));
    REQUIRE(writer->connect_wire(cookie.nic_id, line->substr(0, space), Deadline::after(10s)) == Errc::kOk);
    auto a = writer->import(cookie);
    REQUIRE(a.ok());
    aperture = std::move(a.value());
  }
};

}  // namespace

TEST_CASE("small writes to a target that takes nothing time out, then close at the stall timeout",
          "[wire][hostile]") {
  StallPair p;
  REQUIRE(p.aperture.write_word(0, 1) == Errc::kOk);
  REQUIRE(::kill(p.child.pid(), SIGSTOP) == 0);
  // With a deadline: once the queues are full, kTimeout, nothing written.
  Errc e = Errc::kOk;
  uint64_t writes = 0;
  while (e == Errc::kOk && writes < kMaxSmallWrites) e = p.aperture.write_word(8, ++writes, Deadline::after(100ms));
  CHECK(e == Errc::kTimeout);
  // Without one: the connection closes at the stall timeout.
  e = p.aperture.write_word(8, 0);
  const std::string words = last_error_message();
  ::kill(p.child.pid(), SIGCONT);
  INFO(words);
  CHECK(e == Errc::kClosed);
  CHECK(words.find("took nothing for 300 ms") != std::string::npos);
  CHECK(p.aperture.write_word(8, 0) != Errc::kOk);
}

TEST_CASE("a write to a target that takes nothing more closes the connection at the stall timeout",
          "[wire][hostile]") {
  StallPair p;
  Aperture& a = p.aperture;
  std::vector<std::byte> data(kRegionBytes, std::byte{0x5a});
  REQUIRE(a.write(0, data.data(), 4096) == Errc::kOk);
  test::ForkedPeer& child = p.child;

  REQUIRE(::kill(child.pid(), SIGSTOP) == 0);
  // Writes without a deadline until the sockets' buffers are full and the
  // target has taken nothing for the stall timeout.
  Errc e = Errc::kOk;
  size_t written = 0;
  while (e == Errc::kOk && written < kMaxTotal) {
    e = a.write(0, data.data(), data.size());
    written += data.size();
  }
  const std::string words = last_error_message();
  ::kill(child.pid(), SIGCONT);
  INFO(words);
  CHECK(e == Errc::kClosed);
  CHECK(words.find("took nothing for 300 ms") != std::string::npos);
  CHECK(written < kMaxTotal);
  // The connection stays closed for this aperture.
  CHECK(a.write(0, data.data(), 8) != Errc::kOk);
}
