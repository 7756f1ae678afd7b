// DatagramLink: the two-way datagram connection with credit-based flow
// control (paper 003 sect. 3), set up over the OOB connection manager.
// Handshake both ways, transfer both directions with and without losses for
// several windows, the exact window bound, the ring never overflowing, peer
// death, a malformed hello, close after drain, credit piggybacked on data
// (and forged by a hostile peer).
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "clan_emul/datagram_link.hpp"
#include "clan_emul/datagram_receiver.hpp"
#include "clan_emul/datagram_sender.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/oob_listener.hpp"
#include "clan_emul/oob_manager.hpp"
#include "support/child_process.hpp"
#include "support/oob_runtime.hpp"

using namespace clan;
using namespace std::chrono_literals;

namespace {

using test::oob_config;
using test::RuntimeDir;

DatagramLinkConfig link_config(size_t window, uint64_t seed = 0, double drop = 0,
                               double corrupt = 0) {
  DatagramLinkConfig c;
  c.mtu = 1024 + DatagramLink::kLinkHeader;
  c.ring_bytes = 64 * 1024;
  c.window = window;
  c.ack_every = window;  // paper 003's one ack per window: the counts below rely on it
  c.faults.seed = seed;
  c.faults.drop_rate = drop;
  c.faults.corrupt_rate = corrupt;
  return c;
}

// Datagram `seq` of direction `dir`: its length and bytes follow from both.
size_t pattern_len(uint64_t seq, size_t mtu) { return 1 + (seq * 37) % mtu; }
void fill(std::vector<unsigned char>& buf, uint64_t seq, int dir, size_t mtu) {
  buf.resize(pattern_len(seq, mtu));
  uint64_t st = seq * 2 + static_cast<uint64_t>(dir);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<unsigned char>(splitmix64(st));
}
bool matches(const unsigned char* p, size_t n, uint64_t seq, int dir, size_t mtu) {
  std::vector<unsigned char> want;
  fill(want, seq, dir, mtu);
  return n == want.size() && std::memcmp(p, want.data(), n) == 0;
}

// Two ends of a link in one process (one NIC, two OOB managers).
struct Pair {
  RuntimeDir dir;
  std::unique_ptr<Nic> nic;
  std::unique_ptr<OobManager> mgr_a, mgr_b;
  std::unique_ptr<OobListener> listener;
  std::unique_ptr<DatagramLink> a, b;  // a connected, b accepted
  Errc connect_error = Errc::kOk, accept_error = Errc::kOk;

  Pair(const DatagramLinkConfig& ca, const DatagramLinkConfig& cb) {
    nic = std::move(Nic::open({}).value());
    mgr_a = std::move(OobManager::start(oob_config(dir, "a")).value());
    mgr_b = std::move(OobManager::start(oob_config(dir, "b")).value());
    listener = std::move(mgr_b->listen(7).value());
    std::thread t([&] {
      auto r = DatagramLink::connect(*nic, *mgr_a, "b", 7, ca, Deadline::after(20s));
      if (r) a = std::move(r.value()); else connect_error = r.error();
    });
    auto req = listener->next_request(Deadline::after(20s));
    if (req) {
      auto r = DatagramLink::accept(*nic, *req, cb);
      if (r) b = std::move(r.value()); else accept_error = r.error();
    } else {
      accept_error = req.error();
    }
    t.join();
  }
  bool ok() const { return a && b; }
};

// One side of a two-way transfer: a thread sends `n` datagrams (direction
// `dir`) then flushes; this thread receives the peer's until kClosed. The
// close comes after both sides flushed (`done_out` / `done_in` are the
// barrier). Returns 0 or the number of the first check that failed.
struct SideResult {
  int code = 0;
  uint64_t received = 0;
  DatagramLinkStats stats;
};

template <class Barrier>
SideResult run_side(DatagramLink& link, uint64_t n, int dir, Barrier barrier) {
  SideResult r;
  const size_t mtu = link.mtu();
  std::atomic<int> send_code{0};
  std::thread sender([&] {
    std::vector<unsigned char> buf;
    for (uint64_t s = 0; s < n; ++s) {
      fill(buf, s, dir, mtu);
      if (link.send(buf.data(), buf.size(), Deadline::after(20s)) != Errc::kOk) {
        send_code = 1;
        break;
      }
    }
    if (send_code == 0 && link.flush(Deadline::after(20s)) != Errc::kOk) send_code = 2;
    if (!barrier()) send_code = 3;
    link.close();
  });
  std::vector<unsigned char> buf(mtu);
  uint64_t last = 0;
  bool first = true;
  for (;;) {
    uint64_t seq = 0;
    auto got = link.receive(buf.data(), buf.size(), Deadline::after(20s), &seq);
    if (!got) {
      if (got.error() != Errc::kClosed && r.code == 0) r.code = 10 + static_cast<int>(got.error());
      break;
    }
    if (!first && seq <= last && r.code == 0) r.code = 4;  // strictly increasing
    if (seq >= n && r.code == 0) r.code = 5;
    if (!matches(buf.data(), got.value(), seq, 1 - dir, mtu) && r.code == 0) r.code = 6;
    first = false;
    last = seq;
    ++r.received;
  }
  sender.join();
  if (send_code != 0 && r.code == 0) r.code = 30 + send_code;
  r.stats = link.stats();
  // Everything the peer sent is accounted for: delivered or known lost.
  if (r.code == 0 && link.window() != 0 && r.stats.data_received + r.stats.data_lost != n) {
    r.code = 7;
  }
  if (r.code == 0 && r.stats.ring_full_stalls != 0 && link.window() != 0) r.code = 8;
  if (r.code == 0 && link.window() != 0 && r.stats.max_queued > link.window()) r.code = 9;
  return r;
}

}  // namespace

TEST_CASE("datagram link: in-process handshake and loss-free transfer both ways",
          "[datagram_link]") {
  Pair p(link_config(8), link_config(8));
  REQUIRE(p.ok());
  CHECK(p.a->mtu() == 1024);
  CHECK(p.a->window() == 8);
  const uint64_t n = 2000;
  SideResult rb;
  std::atomic<int> arrived{0};
  auto barrier = [&] {
    // Both sides' senders have flushed before either closes.
    arrived.fetch_add(1);
    auto end = std::chrono::steady_clock::now() + 20s;
    while (arrived.load() < 2) {
      if (std::chrono::steady_clock::now() > end) return false;
      std::this_thread::yield();
    }
    return true;
  };
  std::thread tb([&] { rb = run_side(*p.b, n, 1, barrier); });
  SideResult ra = run_side(*p.a, n, 0, barrier);
  tb.join();
  CHECK(ra.code == 0);
  CHECK(rb.code == 0);
  CHECK(ra.received == n);
  CHECK(rb.received == n);
  CHECK(ra.stats.data_lost == 0);
  // Credit goes back at least once per window consumed: in an ack of its
  // own, or with a datagram going the other way. Standalone acks only when a
  // whole window was consumed without one (and in answer to probes).
  CHECK(ra.stats.credit_acks_sent + ra.stats.credit_piggybacked_sent >= n / 8);
  CHECK(ra.stats.credit_acks_sent <= n / 8 + ra.stats.probes_received);
  CHECK(rb.stats.credit_acks_received + rb.stats.credit_piggybacked_received >= n / 8);
  CHECK(ra.stats.ring_full_stalls == 0);
  CHECK(rb.stats.ring_full_stalls == 0);
}

TEST_CASE("datagram link: two processes, handshake both ways, lossy transfer never deadlocks",
          "[datagram_link][multiprocess]") {
  // Windows 1, 4, 8, 32 with 5 % loss and 1 % corruption in both directions
  // (credit acks and probes included); window 0 (no flow control) too. Each
  // process plays the connecting side once.
  const uint64_t n = 1500;
  for (size_t window : {size_t{1}, size_t{4}, size_t{8}, size_t{32}, size_t{0}}) {
    for (bool child_connects : {false, true}) {
      CAPTURE(window, child_connects);
      RuntimeDir dir;
      test::Pipe ready, c2p, p2c;
      auto cfg = [&](uint64_t seed) { return link_config(window, seed, 0.05, 0.01); };
      auto open_side = [&](bool connects, const char* me, const char* peer, uint64_t seed,
                           std::unique_ptr<Nic>& nic, std::unique_ptr<OobManager>& mgr,
                           std::unique_ptr<OobListener>& listener)
          -> Result<std::unique_ptr<DatagramLink>> {
        auto n1 = Nic::open({});
        auto m1 = OobManager::start(oob_config(dir, me));
        if (!n1 || !m1) return Errc::kSystem;
        nic = std::move(n1.value());
        mgr = std::move(m1.value());
        if (connects) {
          char t;
          if (!ready.get(t)) return Errc::kTimeout;
          return DatagramLink::connect(*nic, *mgr, peer, 7, cfg(seed), Deadline::after(20s));
        }
        auto l = mgr->listen(7);
        if (!l) return l.error();
        listener = std::move(l.value());
        ready.put('r');
        auto req = listener->next_request(Deadline::after(20s));
        if (!req) return req.error();
        return DatagramLink::accept(*nic, *req, cfg(seed));
      };
      test::ChildProcess child([&] {
        std::unique_ptr<Nic> nic;
        std::unique_ptr<OobManager> mgr;
        std::unique_ptr<OobListener> listener;
        auto link = open_side(child_connects, "child", "parent", 101, nic, mgr, listener);
        if (!link) return 50 + static_cast<int>(link.error());
        if ((*link)->faults().seed != 101) return 49;
        SideResult r = run_side(**link, n, 1, [&] {
          char t;
          return c2p.put('d') && p2c.get(t);
        });
        if (r.code) return r.code;
        // At 5 % + 1 % loss, far fewer than 20 % go missing.
        return r.received > n * 8 / 10 ? 0 : 48;
      });
      std::unique_ptr<Nic> nic;
      std::unique_ptr<OobManager> mgr;
      std::unique_ptr<OobListener> listener;
      auto link = open_side(!child_connects, "parent", "child", 202, nic, mgr, listener);
      REQUIRE(link.ok());
      SideResult r = run_side(**link, n, 0, [&] {
        char t;
        return p2c.put('d') && c2p.get(t);
      });
      CHECK(r.code == 0);
      CHECK(r.received > n * 8 / 10);
      CHECK(r.received < n);  // the fault model did drop some
      CHECK(r.stats.receiver.discarded_corrupt > 0);
      if (window != 0) {
        CHECK(r.stats.ring_full_stalls == 0);  // without flow control the ring fills
        CHECK(r.stats.credit_stalls > 0);
        CHECK(r.stats.max_queued <= window);
      }
      CHECK(child.wait() == 0);
    }
  }
}

TEST_CASE("datagram link: a window of W allows exactly W datagrams outstanding",
          "[datagram_link]") {
  for (size_t w : {size_t{1}, size_t{4}, size_t{8}, size_t{32}}) {
    CAPTURE(w);
    Pair p(link_config(w), link_config(w));
    REQUIRE(p.ok());
    char byte = 'x';
    for (size_t i = 0; i < w; ++i) REQUIRE(p.a->send(&byte, 1, Deadline::after(5s)) == Errc::kOk);
    // W unacknowledged: the next send waits for credit and times out.
    CHECK(p.a->send(&byte, 1, Deadline::after(30ms)) == Errc::kTimeout);
    CHECK(p.a->stats().credit_stalls == 1);
    CHECK(p.a->stats().probes_sent >= 1);  // it asked; b, not inside a call, did not answer
    // b consumes all but one: still no credit (one ack restores a whole window).
    std::vector<char> buf(p.b->mtu());
    for (size_t i = 0; i + 1 < w; ++i) {
      auto got = p.b->receive(buf.data(), buf.size(), Deadline::after(5s));
      REQUIRE(got.ok());
    }
    const uint64_t acks_before = p.b->stats().credit_acks_sent;
    CHECK(acks_before == p.b->stats().probes_received);  // only probe answers so far
    CHECK(p.a->send(&byte, 1, Deadline::after(10ms)) == Errc::kTimeout);
    // The last one: b sends ONE credit ack, and a may send W more.
    REQUIRE(p.b->receive(buf.data(), buf.size(), Deadline::after(5s)).ok());
    CHECK(p.b->stats().credit_acks_sent >= acks_before + 1);
    for (size_t i = 0; i < w; ++i) REQUIRE(p.a->send(&byte, 1, Deadline::after(5s)) == Errc::kOk);
    CHECK(p.a->send(&byte, 1, Deadline::after(10ms)) == Errc::kTimeout);
    CHECK(p.a->stats().ring_full_stalls == 0);
    CHECK(p.b->stats().data_received == w);
    // Acks and probes never reach the user: b has exactly W datagrams waiting.
    for (size_t i = 0; i < w; ++i) {
      REQUIRE(p.b->receive(buf.data(), buf.size(), Deadline::after(5s)).ok());
    }
    CHECK(p.b->receive(buf.data(), buf.size(), Deadline::after(10ms)).error() == Errc::kTimeout);
  }
}

TEST_CASE("datagram link: a blocked send resumes once the receiver consumes a window",
          "[datagram_link]") {
  Pair p(link_config(4), link_config(4));
  REQUIRE(p.ok());
  std::atomic<int> sent{0};
  Errc last = Errc::kOk;
  std::thread sender([&] {
    for (int i = 0; i < 100; ++i) {
      uint32_t v = static_cast<uint32_t>(i);
      last = p.a->send(&v, sizeof v, Deadline::after(20s));
      if (last != Errc::kOk) return;
      sent.fetch_add(1);
    }
  });
  std::vector<char> buf(p.b->mtu());
  for (uint32_t i = 0; i < 100; ++i) {
    uint64_t seq = 0;
    auto got = p.b->receive(buf.data(), buf.size(), Deadline::after(20s), &seq);
    REQUIRE(got.ok());
    REQUIRE(got.value() == 4);
    uint32_t v;
    std::memcpy(&v, buf.data(), 4);
    CHECK(v == i);
    CHECK(seq == i);
  }
  sender.join();
  CHECK(last == Errc::kOk);
  CHECK(p.a->stats().ring_full_stalls == 0);
  CHECK(p.b->stats().max_queued <= 4);
}

TEST_CASE("datagram link: a killed peer wakes a blocked receive and a blocked send with kPeerDead",
          "[datagram_link][multiprocess]") {
  RuntimeDir dir;
  test::Pipe ready, accepted;
  test::ChildProcess server([&] {
    auto nic = Nic::open({});
    auto oob = OobManager::start(oob_config(dir, "server"));
    if (!nic || !oob) return 10;
    auto listener = (*oob)->listen(7);
    if (!listener) return 11;
    ready.put('r');
    auto req = (*listener)->next_request(Deadline::after(20s));
    if (!req) return 12;
    auto link = DatagramLink::accept(**nic, *req, link_config(4));
    if (!link) return 13;
    accepted.put('a');
    pause();  // killed by the parent
    return 0;
  });
  char token;
  REQUIRE(ready.get(token));
  NicConfig nc;
  nc.spin_budget = 0ns;  // the survivor really sleeps
  auto nic = std::move(Nic::open(nc).value());
  auto oob = std::move(OobManager::start(oob_config(dir, "client")).value());
  auto link = DatagramLink::connect(*nic, *oob, "server", 7, link_config(4), Deadline::after(20s));
  REQUIRE(link.ok());
  DatagramLink& l = *link.value();
  REQUIRE(accepted.get(token));
  char byte = 'x';
  for (int i = 0; i < 4; ++i) REQUIRE(l.send(&byte, 1, Deadline::after(5s)) == Errc::kOk);
  Errc receive_result = Errc::kOk;
  std::thread receiver([&] {
    std::vector<char> buf(l.mtu());
    receive_result = l.receive(buf.data(), buf.size(), Deadline::after(20s)).error();
  });
  std::thread killer([&] { server.kill_now(); });
  auto start = std::chrono::steady_clock::now();
  const Errc send_result = l.send(&byte, 1, Deadline::after(20s));  // no credit: blocks
  auto took = std::chrono::steady_clock::now() - start;
  killer.join();
  receiver.join();
  CHECK(send_result == Errc::kPeerDead);
  CHECK(receive_result == Errc::kPeerDead);
  CHECK(took < 10s);
  CHECK(l.send(&byte, 1, Deadline::after(1s)) == Errc::kPeerDead);
  CHECK(l.flush(Deadline::after(1s)) == Errc::kPeerDead);
  CHECK(l.readable());
  server.wait();
}

TEST_CASE("datagram link: a malformed hello is rejected with kCorrupt", "[datagram_link][hostile]") {
  RuntimeDir dir;
  auto nic = std::move(Nic::open({}).value());
  auto server = std::move(OobManager::start(oob_config(dir, "server")).value());
  auto client = std::move(OobManager::start(oob_config(dir, "client")).value());
  auto listener = std::move(server->listen(7).value());
  for (size_t size : {size_t{13}, size_t{128}}) {  // wrong size; right size, garbage
    CAPTURE(size);
    Errc connect_result = Errc::kOk;
    std::thread t([&] {
      auto r = client->connect("server", 7, std::vector<std::byte>(size, std::byte{0x5a}),
                               Deadline::after(20s));
      connect_result = r.error();
    });
    auto req = listener->next_request(Deadline::after(20s));
    REQUIRE(req.ok());
    CHECK(DatagramLink::accept(*nic, *req, link_config(4)).error() == Errc::kCorrupt);
    t.join();
    CHECK(connect_result == Errc::kRefused);
  }
  CHECK(nic->imports_in_use() == 0);
}

TEST_CASE("datagram link: mismatched windows or a ring too small for the window are refused",
          "[datagram_link]") {
  {
    Pair p(link_config(4), link_config(8));
    CHECK_FALSE(p.ok());
    CHECK(p.accept_error == Errc::kInvalidArgument);
    CHECK(p.connect_error == Errc::kRefused);
  }
  // 64 KiB cannot hold 64 frames of 1 KiB plus the control reserve.
  RuntimeDir dir;
  auto nic = std::move(Nic::open({}).value());
  auto mgr = std::move(OobManager::start(oob_config(dir, "a")).value());
  DatagramLinkConfig big = link_config(64);
  CHECK(DatagramLink::ring_bytes_needed(big) > big.ring_bytes);
  CHECK(DatagramLink::connect(*nic, *mgr, "b", 7, big, Deadline::after(5s)).error() ==
        Errc::kInvalidArgument);
  // A plain DatagramConfig converts, with the default window, which fits it.
  DatagramConfig plain;
  CHECK(DatagramLink::ring_bytes_needed(plain) <= plain.ring_bytes);
}

TEST_CASE("datagram link: close gives kClosed after the peer drained", "[datagram_link]") {
  for (size_t w : {size_t{0}, size_t{4}}) {
    CAPTURE(w);
    Pair p(link_config(w), link_config(w));
    REQUIRE(p.ok());
    for (uint32_t i = 0; i < 3; ++i) REQUIRE(p.a->send(&i, sizeof i, Deadline::after(5s)) == Errc::kOk);
    REQUIRE(p.a->close() == Errc::kOk);
    CHECK(p.a->send("x", 1, Deadline::after(1s)) == Errc::kClosed);
    std::vector<char> buf(p.b->mtu());
    for (uint32_t i = 0; i < 3; ++i) {
      auto got = p.b->receive(buf.data(), buf.size(), Deadline::after(5s));
      REQUIRE(got.ok());
      uint32_t v;
      std::memcpy(&v, buf.data(), 4);
      CHECK(v == i);
    }
    CHECK(p.b->receive(buf.data(), buf.size(), Deadline::after(5s)).error() == Errc::kClosed);
    CHECK(p.b->readable());
    CHECK(p.b->send("x", 1, Deadline::after(5s)) == Errc::kClosed);
    CHECK(p.a->receive(buf.data(), buf.size(), Deadline::after(5s)).error() == Errc::kClosed);
  }
}

TEST_CASE("datagram link: readable() reports datagrams, not credit traffic", "[datagram_link]") {
  Pair p(link_config(2), link_config(2));
  REQUIRE(p.ok());
  std::vector<char> buf(p.a->mtu());
  CHECK_FALSE(p.b->readable());
  REQUIRE(p.a->send("ab", 2, Deadline::after(5s)) == Errc::kOk);
  REQUIRE(p.a->send("cd", 2, Deadline::after(5s)) == Errc::kOk);
  CHECK(p.b->readable());
  REQUIRE(p.b->receive(buf.data(), buf.size(), Deadline::after(5s)).ok());
  REQUIRE(p.b->receive(buf.data(), buf.size(), Deadline::after(5s)).ok());  // sends the ack
  CHECK_FALSE(p.b->readable());
  // The ack waits in a's ring: not a datagram.
  CHECK_FALSE(p.a->readable());
  CHECK(p.a->stats().credit_acks_received == 1);
  CHECK(p.a->send("ef", 2, Deadline::now()) == Errc::kOk);
  CHECK(p.a->receive(buf.data(), buf.size(), Deadline::now()).error() == Errc::kTimeout);
  CHECK(p.b->stats().malformed == 0);
}

TEST_CASE("datagram link: by default credit comes back every half window, before a stall",
          "[datagram_link]") {
  DatagramLinkConfig c = link_config(8);
  c.ack_every = 0;  // the default: window / 2
  Pair p(c, c);
  REQUIRE(p.ok());
  std::vector<char> buf(p.a->mtu());
  for (int i = 0; i < 4; ++i) REQUIRE(p.a->send("x", 1, Deadline::after(5s)) == Errc::kOk);
  for (int i = 0; i < 4; ++i) REQUIRE(p.b->receive(buf.data(), buf.size(), Deadline::after(5s)).ok());
  // Four more fill the window; b's ack for the first four is already on its
  // way, so the next four go too, none of the eight waiting at all.
  for (int i = 0; i < 8; ++i) REQUIRE(p.a->send("y", 1, Deadline::now()) == Errc::kOk);
  CHECK(p.a->stats().credit_acks_received == 1);
  CHECK(p.b->stats().credit_acks_sent == 1);
}

TEST_CASE("datagram link: in request-reply traffic credit rides on the data, no ack frames",
          "[datagram_link]") {
  // ack_every = W (link_config): a window of 1 would ack every datagram at once.
  for (size_t w : {size_t{2}, size_t{8}, size_t{32}}) {
    CAPTURE(w);
    Pair p(link_config(w), link_config(w));
    REQUIRE(p.ok());
    std::vector<char> buf(p.a->mtu());
    const int calls = 500;
    for (int i = 0; i < calls; ++i) {
      REQUIRE(p.a->send("q", 1, Deadline::now()) == Errc::kOk);  // never waits for credit
      REQUIRE(p.b->receive(buf.data(), buf.size(), Deadline::after(5s)).ok());
      REQUIRE(p.b->send("r", 1, Deadline::now()) == Errc::kOk);
      REQUIRE(p.a->receive(buf.data(), buf.size(), Deadline::after(5s)).ok());
    }
    for (DatagramLink* l : {p.a.get(), p.b.get()}) {
      const DatagramLinkStats s = l->stats();
      CHECK(s.credit_stalls == 0);
      CHECK(s.credit_acks_sent == 0);
      CHECK(s.probes_sent == 0);
      CHECK(s.credit_piggybacked_received >= calls - 1);
    }
    // a's first request had nothing to return; every later datagram did.
    CHECK(p.a->stats().credit_piggybacked_sent == calls - 1);
    CHECK(p.b->stats().credit_piggybacked_sent == calls);
  }
}

namespace {

// The other end of a link, played by hand: it sends whatever link frames a
// test writes. Mirrors datagram_link.cpp's hello and link header.
struct RawPeer {
  struct Hello {
    uint32_t magic, version;
    uint64_t mtu, ring_bytes, window;
    RdmaCookie ring, read_pointer;
  };
  static_assert(sizeof(Hello) == 128);
  static constexpr uint32_t kData = 0x4c44a7a1;

  RuntimeDir dir;
  std::unique_ptr<Nic> nic;
  std::unique_ptr<OobManager> mgr_raw, mgr_link;
  std::unique_ptr<OobListener> listener;
  std::unique_ptr<DatagramReceiver> rx;
  std::unique_ptr<DatagramSender> tx;
  std::shared_ptr<OobConnection> conn;
  std::unique_ptr<DatagramLink> link;

  explicit RawPeer(const DatagramLinkConfig& c) {
    nic = std::move(Nic::open({}).value());
    mgr_raw = std::move(OobManager::start(oob_config(dir, "raw")).value());
    mgr_link = std::move(OobManager::start(oob_config(dir, "link")).value());
    listener = std::move(mgr_link->listen(7).value());
    rx = std::move(DatagramReceiver::create(*nic, c).value());
    tx = std::move(DatagramSender::create(*nic, c).value());
    const Hello mine{0x444c4e4b, 1, c.mtu, c.ring_bytes, c.window, rx->cookie(), tx->cookie()};
    std::vector<std::byte> blob(sizeof mine);
    std::memcpy(blob.data(), &mine, sizeof mine);
    std::thread t([&] {
      auto r = mgr_raw->connect("link", 7, blob, Deadline::after(20s));
      if (r) conn = std::move(r.value());
    });
    auto req = listener->next_request(Deadline::after(20s));
    if (req) {
      auto l = DatagramLink::accept(*nic, *req, c);
      if (l) link = std::move(l.value());
    }
    t.join();
    if (!conn || !link) return;
    Hello theirs;
    REQUIRE(conn->peer_blob().size() == sizeof theirs);
    std::memcpy(&theirs, conn->peer_blob().data(), sizeof theirs);
    REQUIRE(tx->attach(theirs.ring) == Errc::kOk);
    REQUIRE(rx->attach(theirs.read_pointer) == Errc::kOk);
  }
  bool ok() const { return conn && link; }
  Errc send_data(uint64_t seq, uint32_t credit) {
    struct {
      uint32_t type, credit;
      uint64_t seq;
    } h{kData, credit, seq};
    return tx->send(&h, sizeof h, "x", 1, Deadline::after(5s));
  }
};

}  // namespace

TEST_CASE("datagram link: piggybacked credit for datagrams never sent breaks the link",
          "[datagram_link][hostile]") {
  RawPeer p(link_config(4));
  REQUIRE(p.ok());
  std::vector<char> buf(p.link->mtu());
  for (int i = 0; i < 3; ++i) REQUIRE(p.link->send("y", 1, Deadline::now()) == Errc::kOk);
  // Honest: credit for all three, then a stale value (ignored, not an error).
  REQUIRE(p.send_data(0, 3) == Errc::kOk);
  REQUIRE(p.send_data(1, 1) == Errc::kOk);
  REQUIRE(p.link->receive(buf.data(), buf.size(), Deadline::after(5s)).ok());
  REQUIRE(p.link->receive(buf.data(), buf.size(), Deadline::after(5s)).ok());
  CHECK(p.link->stats().credit_piggybacked_received == 1);
  // The whole window is free again: four sends go without waiting.
  for (int i = 0; i < 4; ++i) REQUIRE(p.link->send("z", 1, Deadline::now()) == Errc::kOk);
  // Seven sent; credit for eight is a lie, in whatever high bits it hides.
  for (uint32_t lie : {8u, 0x40000004u}) {
    CAPTURE(lie);
    RawPeer q(link_config(4));
    REQUIRE(q.ok());
    for (int i = 0; i < 4; ++i) REQUIRE(q.link->send("y", 1, Deadline::now()) == Errc::kOk);
    REQUIRE(q.send_data(0, 4) == Errc::kOk);
    REQUIRE(q.link->receive(buf.data(), buf.size(), Deadline::after(5s)).ok());
    for (int i = 0; i < 3; ++i) REQUIRE(q.link->send("y", 1, Deadline::now()) == Errc::kOk);
    REQUIRE(q.send_data(1, lie) == Errc::kOk);
    CHECK(q.link->receive(buf.data(), buf.size(), Deadline::after(5s)).error() == Errc::kCorrupt);
    CHECK(q.link->send("y", 1, Deadline::now()) == Errc::kCorrupt);
  }
  // Without flow control there is no credit to carry: a value is forged.
  RawPeer r(link_config(0));
  REQUIRE(r.ok());
  REQUIRE(r.send_data(0, 1) == Errc::kOk);
  CHECK(r.link->receive(buf.data(), buf.size(), Deadline::after(5s)).error() == Errc::kCorrupt);
}

TEST_CASE("datagram link: unread() sees an arrival without taking it, try_receive never waits for a reader",
          "[datagram_link]") {
  Pair p(link_config(4), link_config(4));
  REQUIRE(p.ok());
  std::vector<char> buf(p.a->mtu());
  CHECK_FALSE(p.b->unread());
  CHECK(p.b->try_receive(buf.data(), buf.size()).error() == Errc::kTimeout);
  REQUIRE(p.a->send("ab", 2, Deadline::after(5s)) == Errc::kOk);
  CHECK(p.b->unread());
  CHECK(p.b->unread());  // looking took nothing
  auto got = p.b->try_receive(buf.data(), buf.size());
  REQUIRE(got.ok());
  CHECK(got.value() == 2);
  CHECK(std::memcmp(buf.data(), "ab", 2) == 0);
  CHECK_FALSE(p.b->unread());

  // A reader blocked in receive() holds the receiving side: try_receive
  // says so at once instead of queueing behind it.
  std::atomic<bool> in_receive{false};
  std::atomic<bool> reader_got{false};  // Catch2 assertions stay on this thread
  std::thread reader([&] {
    std::vector<char> rb(p.b->mtu());
    in_receive = true;
    auto r = p.b->receive(rb.data(), rb.size(), Deadline::after(20s));
    reader_got = r.ok();
  });
  while (!in_receive) std::this_thread::yield();
  // The reader may not be inside yet: wait until try_receive finds it there.
  Result<size_t> busy = Errc::kTimeout;
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while ((busy = p.b->try_receive(buf.data(), buf.size())).error() != Errc::kWouldBlock &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::yield();
  }
  CHECK(busy.error() == Errc::kWouldBlock);
  REQUIRE(p.a->send("cd", 2, Deadline::after(5s)) == Errc::kOk);  // the reader's
  reader.join();
  CHECK(reader_got);
}
