// The distributed message queue: wrap-around with every size, in-place
// receive, blocking on empty and full, DMA, close, and a hostile peer.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "clan_emul/aperture.hpp"
#include "clan_emul/cookie_queue.hpp"
#include "clan_emul/dmq_receiver.hpp"
#include "clan_emul/dmq_sender.hpp"
#include "clan_emul/nic.hpp"
#include "support/child_process.hpp"

using namespace clan;
using namespace std::chrono_literals;

namespace {

struct Link {
  std::unique_ptr<Nic> tx_nic, rx_nic;
  std::unique_ptr<DmqSender> tx;
  std::unique_ptr<DmqReceiver> rx;
  explicit Link(DmqConfig cfg = {}, NicConfig nc = {}) {
    tx_nic = std::move(Nic::open(nc).value());
    rx_nic = std::move(Nic::open(nc).value());
    tx = std::move(DmqSender::create(*tx_nic, cfg).value());
    rx = std::move(DmqReceiver::create(*rx_nic, cfg).value());
    REQUIRE(tx->attach(rx->cookie()) == Errc::kOk);
    REQUIRE(rx->attach(tx->cookie()) == Errc::kOk);
  }
};

// Message i of size n: bytes derived from (i, offset) so any mix-up shows.
void fill(std::vector<uint8_t>& buf, uint64_t i, size_t n) {
  buf.resize(n);
  for (size_t k = 0; k < n; ++k) buf[k] = static_cast<uint8_t>(i * 131 + k * 7 + (k >> 8));
}
bool matches(const DmqMessage& m, uint64_t i, size_t n) {
  if (m.size != n) return false;
  for (size_t k = 0; k < n; ++k)
    if (static_cast<uint8_t>(m.data[k]) != static_cast<uint8_t>(i * 131 + k * 7 + (k >> 8)))
      return false;
  return true;
}

}  // namespace

TEST_CASE("every message size round-trips through many wrap-arounds", "[dmq]") {
  DmqConfig cfg;
  cfg.ring_bytes = 4096;
  cfg.max_message = 1500;
  Link l(cfg);
  auto transfer = GENERATE(Transfer::kPio, Transfer::kDma);
  std::vector<uint8_t> buf;
  // Sizes 0..1500 then back down: every alignment lands at every ring offset.
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 1500; ++n) sizes.push_back(n);
  for (size_t n = 1500; n-- > 0;) sizes.push_back(n);
  std::thread sender([&] {
    std::vector<uint8_t> b;
    for (uint64_t i = 0; i < sizes.size(); ++i) {
      fill(b, i, sizes[i]);
      if (l.tx->send(b.data(), b.size(), Deadline::after(20s), transfer) != Errc::kOk) return;
    }
  });
  uint64_t good = 0;
  for (uint64_t i = 0; i < sizes.size(); ++i) {
    auto m = l.rx->receive(Deadline::after(20s));
    if (!m) {
      FAIL("receive failed: " << to_string(m.error()) << " at message " << i);
    }
    if (matches(*m, i, sizes[i])) ++good;
    REQUIRE(l.rx->release() == Errc::kOk);
  }
  sender.join();
  CHECK(good == sizes.size());
  CHECK(l.rx->status() == Errc::kOk);
}

TEST_CASE("a message that would wrap is read contiguously in place", "[dmq]") {
  DmqConfig cfg;
  cfg.ring_bytes = 4096;
  cfg.max_message = 1024;
  Link l(cfg);
  std::vector<uint8_t> b;
  // Advance to 16 bytes before the ring's end (3 x 1024 + 1008), then send a
  // message across it.
  for (size_t n : {1016, 1016, 1016, 1000}) {
    fill(b, 0, n);
    REQUIRE(l.tx->send(b.data(), b.size(), Deadline::after(5s)) == Errc::kOk);
    REQUIRE(l.rx->receive(Deadline::after(5s)).ok());
    REQUIRE(l.rx->release() == Errc::kOk);
  }
  fill(b, 1, 1000);
  REQUIRE(l.tx->send(b.data(), b.size(), Deadline::after(5s)) == Errc::kOk);
  auto m = l.rx->receive(Deadline::after(5s));
  REQUIRE(m.ok());
  const std::byte* ring_end = l.rx->region().data() + dmq::kRing + cfg.ring_bytes;
  CHECK(m->data < ring_end);
  CHECK(m->data + m->size > ring_end);  // runs on into the reserved area
  CHECK(matches(*m, 1, 1000));
}

TEST_CASE("receive blocks on an empty queue and send blocks on a full one", "[dmq]") {
  DmqConfig cfg;
  cfg.ring_bytes = 4096;
  cfg.max_message = 512;
  NicConfig nc;
  nc.spin_budget = 0ns;  // exercise the sleeping path
  Link l(cfg, nc);
  CHECK(l.rx->receive(Deadline::after(20ms)).error() == Errc::kTimeout);

  std::vector<uint8_t> b(504, 1);  // 512 bytes a message with its header
  for (int i = 0; i < 8; ++i) REQUIRE(l.tx->send(b.data(), b.size(), Deadline::after(5s)) == Errc::kOk);
  CHECK(l.tx->space() == 0);
  CHECK(l.tx->send(b.data(), b.size(), Deadline::after(20ms)) == Errc::kTimeout);

  // A sender blocked on the full ring resumes when the receiver makes room.
  std::atomic<int> result{-1};
  std::thread sender([&] { result = int(l.tx->send(b.data(), b.size(), Deadline::after(20s))); });
  auto m = l.rx->receive(Deadline::after(5s));
  REQUIRE(m.ok());
  REQUIRE(l.rx->release() == Errc::kOk);
  sender.join();
  CHECK(result == int(Errc::kOk));
}

TEST_CASE("an orderly close reaches the receiver after the queued messages", "[dmq]") {
  Link l;
  REQUIRE(l.tx->send("a", 1, Deadline::after(5s)) == Errc::kOk);
  REQUIRE(l.tx->close() == Errc::kOk);
  auto m = l.rx->receive(Deadline::after(5s));
  REQUIRE(m.ok());
  CHECK(m->size == 1);
  l.rx->release();
  CHECK(l.rx->receive(Deadline::after(5s)).error() == Errc::kClosed);
  CHECK(l.tx->send("b", 1, Deadline::after(5s)) == Errc::kClosed);
}

TEST_CASE("a receiver that closes makes the sender fail instead of blocking", "[dmq]") {
  DmqConfig cfg;
  cfg.ring_bytes = 4096;
  cfg.max_message = 512;
  Link l(cfg);
  std::vector<uint8_t> b(504, 1);
  for (int i = 0; i < 8; ++i) l.tx->send(b.data(), b.size(), Deadline::after(5s));
  std::atomic<int> result{-1};
  std::thread sender([&] { result = int(l.tx->send(b.data(), b.size(), Deadline::after(20s))); });
  REQUIRE(l.rx->close() == Errc::kOk);
  sender.join();
  CHECK(result == int(Errc::kClosed));
}

TEST_CASE("abort wakes a blocked receiver with the reason", "[dmq]") {
  NicConfig nc;
  nc.spin_budget = 0ns;
  Link l({}, nc);
  std::atomic<int> result{-1};
  std::thread t([&] { result = int(l.rx->receive(Deadline::after(20s)).error()); });
  l.rx->abort(Errc::kPeerDead);
  t.join();
  CHECK(result == int(Errc::kPeerDead));
}

TEST_CASE("oversized messages and misuse are refused", "[dmq]") {
  DmqConfig cfg;
  cfg.ring_bytes = 4096;
  cfg.max_message = 100;
  Link l(cfg);
  std::vector<uint8_t> b(101);
  CHECK(l.tx->send(b.data(), b.size(), Deadline::after(1s)) == Errc::kInvalidArgument);
  CHECK(l.rx->release() == Errc::kInvalidArgument);
  DmqConfig bad;
  bad.ring_bytes = 5000;
  CHECK(DmqSender::create(*l.tx_nic, bad).error() == Errc::kInvalidArgument);
}

TEST_CASE("DMA sends survive a tiny engine queue and short deadlines", "[dmq][dma]") {
  NicConfig nc;
  nc.dma_queue_depth = GENERATE(1u, 2u);
  DmqConfig cfg;
  cfg.ring_bytes = 1 << 18;
  cfg.max_message = 60000;
  Link l(cfg, nc);
  std::vector<uint8_t> b;
  for (uint64_t i = 0; i < 50; ++i) {
    fill(b, i, 60000);
    // A deadline already past: the message is sent whole or not at all.
    Errc e = l.tx->send(b.data(), b.size(), Deadline::now(), Transfer::kDma);
    REQUIRE((e == Errc::kOk || e == Errc::kTimeout));
    if (e == Errc::kTimeout) REQUIRE(l.tx->send(b.data(), b.size(), Deadline::after(10s), Transfer::kDma) == Errc::kOk);
    auto m = l.rx->receive(Deadline::after(10s));
    REQUIRE(m.ok());
    CHECK(matches(*m, i, 60000));
    l.rx->release();
  }
  CHECK(l.tx->status() == Errc::kOk);
}

TEST_CASE("a revoked ring makes the sender fail with the cookie error", "[dmq][cookie]") {
  Link l;
  // The receiver's region is revoked behind the sender's back.
  const_cast<Region&>(l.rx->region()).revoke();
  CHECK(l.tx->send("x", 1, Deadline::after(1s)) == Errc::kRevokedCookie);
  CHECK(l.tx->send("x", 1, Deadline::after(1s), Transfer::kDma) == Errc::kRevokedCookie);
}

TEST_CASE("garbage from a hostile peer breaks that queue only", "[dmq][hostile]") {
  DmqConfig cfg;
  cfg.ring_bytes = 4096;
  cfg.max_message = 512;
  Link victim(cfg), bystander(cfg);
  // The hostile peer holds the victim ring's cookie, as its sender does.
  auto hostile = std::move(Nic::open({}).value());
  auto ap = std::move(hostile->import(victim.rx->cookie()).value());

  SECTION("write pointer beyond the ring") {
    ap.write_word(dmq::kLazyWrite, 1u << 20);
    CHECK(victim.rx->receive(Deadline::after(1s)).error() == Errc::kCorrupt);
  }
  SECTION("misaligned write pointer") {
    ap.write_word(dmq::kLazyWrite, 13);
    CHECK(victim.rx->receive(Deadline::after(1s)).error() == Errc::kCorrupt);
  }
  SECTION("header with an absurd length") {
    ap.write_word(dmq::kRing, dmq::header(0, 0xfffffff0u));
    ap.write_word(dmq::kLazyWrite, 64);
    CHECK(victim.rx->receive(Deadline::after(1s)).error() == Errc::kCorrupt);
  }
  SECTION("length longer than what was published") {
    ap.write_word(dmq::kRing, dmq::header(0, 100));
    ap.write_word(dmq::kLazyWrite, 16);
    CHECK(victim.rx->receive(Deadline::after(1s)).error() == Errc::kCorrupt);
  }
  SECTION("random bytes over the whole ring") {
    std::vector<uint64_t> junk(4096 / 8);
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (auto& w : junk) w = (x ^= x << 13, x ^= x >> 7, x ^= x << 17);
    ap.write(dmq::kRing, junk.data(), 4096);
    ap.write_word(dmq::kLazyWrite, 4096);
    CHECK(victim.rx->receive(Deadline::after(1s)).error() == Errc::kCorrupt);
  }
  // Broken for good, and nothing else is affected.
  CHECK(victim.rx->receive(Deadline::after(1s)).error() == Errc::kCorrupt);
  REQUIRE(bystander.tx->send("ok", 2, Deadline::after(1s)) == Errc::kOk);
  auto m = bystander.rx->receive(Deadline::after(1s));
  REQUIRE(m.ok());
  CHECK(std::memcmp(m->data, "ok", 2) == 0);
}

TEST_CASE("a receiver that writes a bad read pointer breaks the sender with kCorrupt",
          "[dmq][hostile]") {
  // The sender looks at the read pointer only once the space it knows to be
  // free runs short: it finds the lie then, having written only into that space.
  DmqConfig cfg;
  cfg.ring_bytes = 4096;
  cfg.max_message = 512;
  Link l(cfg);
  auto hostile = std::move(Nic::open({}).value());
  auto ap = std::move(hostile->import(l.tx->cookie()).value());
  ap.write_word(dmq::kLazyRead, 1u << 30);  // "consumed" more than was ever sent
  std::vector<uint8_t> b(504, 1);           // 512 ring bytes a message with its header
  int sent = 0;
  Errc e = Errc::kOk;
  while (sent <= 8 && (e = l.tx->send(b.data(), b.size(), Deadline::after(1s))) == Errc::kOk) ++sent;
  CHECK(e == Errc::kCorrupt);
  CHECK(sent == 8);  // the ring's 4096 bytes, all free from the start
  CHECK(l.tx->send("x", 1, Deadline::after(1s)) == Errc::kCorrupt);
}

TEST_CASE("streaming between two processes with every size pattern", "[dmq][multiprocess]") {
  DmqConfig cfg;
  cfg.ring_bytes = 8192;
  cfg.max_message = 3000;
  auto transfer = GENERATE(Transfer::kPio, Transfer::kDma);
  auto rx_nic = std::move(Nic::open({}).value());
  auto rx = std::move(DmqReceiver::create(*rx_nic, cfg).value());
  test::Pipe to_child, to_parent;
  const RdmaCookie ring = rx->cookie();
  const int kMessages = 20000;
  test::ChildProcess child([&] {
    auto nic = Nic::open({});
    auto tx = DmqSender::create(**nic, cfg);
    if (!tx) return 1;
    if ((*tx)->attach(ring) != Errc::kOk) return 2;
    to_parent.put((*tx)->cookie());
    std::vector<uint8_t> b;
    for (int i = 0; i < kMessages; ++i) {
      const size_t n = (static_cast<size_t>(i) * 7919) % (cfg.max_message + 1);
      fill(b, i, n);
      if ((*tx)->send(b.data(), n, Deadline::after(20s), transfer) != Errc::kOk) return 3;
    }
    return (*tx)->close() == Errc::kOk ? 0 : 4;
  });
  RdmaCookie tx_cookie;
  REQUIRE(to_parent.get(tx_cookie));
  REQUIRE(rx->attach(tx_cookie) == Errc::kOk);
  int good = 0;
  for (int i = 0; i < kMessages; ++i) {
    auto m = rx->receive(Deadline::after(20s));
    INFO("message " << i << ": " << to_string(m.error()));
    REQUIRE(m.ok());
    if (matches(*m, i, (static_cast<size_t>(i) * 7919) % (cfg.max_message + 1))) ++good;
    rx->release();
  }
  CHECK(good == kMessages);
  CHECK(rx->receive(Deadline::after(20s)).error() == Errc::kClosed);
  CHECK(child.wait() == 0);
}

TEST_CASE("the cookie queue carries cookies that can be imported", "[dmq][cookie_queue]") {
  auto a = std::move(Nic::open({}).value());
  auto b = std::move(Nic::open({}).value());
  auto writer = std::move(CookieQueueWriter::create(*a, 4).value());
  auto reader = std::move(CookieQueueReader::create(*b, 4).value());
  REQUIRE(writer.attach(reader.cookie()) == Errc::kOk);
  REQUIRE(reader.attach(writer.cookie()) == Errc::kOk);
  // Side a owns receive buffers and hands their cookies to side b.
  std::vector<Region> buffers;
  for (int i = 0; i < 4; ++i) {
    buffers.push_back(std::move(a->export_region(4096).value()));
    REQUIRE(writer.push(buffers.back().cookie(), Deadline::after(1s)) == Errc::kOk);
  }
  for (int i = 0; i < 4; ++i) {
    auto c = reader.pop(Deadline::after(1s));
    REQUIRE(c.ok());
    auto ap = b->import(c.value());
    REQUIRE(ap.ok());
    REQUIRE(ap->write(0, &i, sizeof i) == Errc::kOk);
  }
  for (int i = 0; i < 4; ++i) CHECK(std::memcmp(buffers[i].data(), &i, sizeof i) == 0);
  CHECK(reader.pop(Deadline::after(10ms)).error() == Errc::kTimeout);
}
