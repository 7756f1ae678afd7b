// DatagramLink over the udp channel (libfabric's udp provider on 127.0.0.1):
// two processes moving datagrams of every size up to the MTU both ways, with
// and without the seeded faults; the fault model's drops and corruptions
// counted exactly; the window bound and credit over udp; the MTU limit and a
// channel mismatch refused in words; a killed peer reported through the
// out-of-band connection.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "clan_emul/error_detail.hpp"
#include "clan_emul/event_queue.hpp"
#include "support/child_process.hpp"
#include "udp_link_pair.hpp"

using namespace clan;
using namespace std::chrono_literals;
using test::oob_config;
using test::RuntimeDir;
using test::udp_link_config;
using test::UdpLinkPair;

namespace {

// Datagram `seq` of direction `dir`: every size from 1 to the mtu in turn.
void fill(std::vector<unsigned char>& buf, uint64_t seq, int dir, size_t mtu) {
  buf.resize(1 + seq % mtu);
  uint64_t st = seq * 2 + static_cast<uint64_t>(dir);
  for (auto& b : buf) b = static_cast<unsigned char>(splitmix64(st));
}
bool matches(const unsigned char* p, size_t n, uint64_t seq, int dir, size_t mtu) {
  std::vector<unsigned char> want;
  fill(want, seq, dir, mtu);
  return n == want.size() && std::memcmp(p, want.data(), n) == 0;
}

// One side: a thread sends n datagrams and flushes; this thread receives the
// peer's until kClosed; the close comes after the barrier. 0 or a failed check.
template <class Barrier>
int run_side(DatagramLink& link, uint64_t n, int dir, Barrier barrier, uint64_t* received,
             DatagramLinkStats* stats) {
  const size_t mtu = link.mtu();
  std::atomic<int> send_code{0};
  std::thread sender([&] {
    std::vector<unsigned char> buf;
    for (uint64_t s = 0; s < n && send_code == 0; ++s) {
      fill(buf, s, dir, mtu);
      if (link.send(buf.data(), buf.size(), Deadline::after(20s)) != Errc::kOk) send_code = 1;
    }
    if (send_code == 0 && link.flush(Deadline::after(20s)) != Errc::kOk) send_code = 2;
    if (!barrier()) send_code = 3;
    link.close();
  });
  std::vector<unsigned char> buf(mtu);
  int code = 0;
  uint64_t last = 0;
  *received = 0;
  for (;;) {
    uint64_t seq = 0;
    auto got = link.receive(buf.data(), buf.size(), Deadline::after(20s), &seq);
    if (!got) {
      if (got.error() != Errc::kClosed && code == 0) code = 10 + static_cast<int>(got.error());
      break;
    }
    if (*received != 0 && seq <= last && code == 0) code = 4;
    if (!matches(buf.data(), got.value(), seq, 1 - dir, mtu) && code == 0) code = 5;
    last = seq;
    ++*received;
  }
  sender.join();
  if (send_code != 0 && code == 0) code = 30 + send_code;
  *stats = link.stats();
  if (code == 0 && stats->data_received + stats->data_lost != n) code = 6;
  if (code == 0 && stats->max_queued > link.window()) code = 7;
  return code;
}

Result<std::unique_ptr<DatagramLink>> open_side(const RuntimeDir& dir, bool connects,
                                                const char* me, const char* peer,
                                                const DatagramLinkConfig& c, test::Pipe& ready,
                                                std::unique_ptr<Nic>& nic,
                                                std::unique_ptr<OobManager>& mgr,
                                                std::unique_ptr<OobListener>& listener) {
  auto n1 = Nic::open({});
  auto m1 = OobManager::start(oob_config(dir, me));
  if (!n1 || !m1) return Errc::kSystem;
  nic = std::move(n1.value());
  mgr = std::move(m1.value());
  if (connects) {
    char t;
    if (!ready.get(t)) return Errc::kTimeout;
    return DatagramLink::connect(*nic, *mgr, peer, 7, c, Deadline::after(20s));
  }
  auto l = mgr->listen(7);
  if (!l) return l.error();
  listener = std::move(l.value());
  ready.put('r');
  auto req = listener->next_request(Deadline::after(20s));
  if (!req) return req.error();
  return DatagramLink::accept(*nic, *req, c);
}

}  // namespace

TEST_CASE("datagram link over udp: two processes move datagrams of every size both ways",
          "[datagram_link][udp][multiprocess]") {
  // Loss-free at window 16, then 5 % drops and 1 % corruption both ways
  // (acks and probes included) at window 4; each process connects once.
  struct Run {
    size_t window;
    double drop, corrupt;
    bool child_connects;
  };
  for (const Run run : {Run{16, 0, 0, false}, Run{4, 0.05, 0.01, true}}) {
    CAPTURE(run.window, run.drop, run.child_connects);
    const uint64_t n = 2 * (DatagramLink::kMaxUdpMtu - DatagramLink::kLinkHeader);
    RuntimeDir dir;
    test::Pipe ready, c2p, p2c;
    test::ChildProcess child([&] {
      std::unique_ptr<Nic> nic;
      std::unique_ptr<OobManager> mgr;
      std::unique_ptr<OobListener> listener;
      auto link = open_side(dir, run.child_connects, "child", "parent",
                            udp_link_config(run.window, 101, run.drop, run.corrupt), ready, nic,
                            mgr, listener);
      if (!link) return 50 + static_cast<int>(link.error());
      uint64_t received = 0;
      DatagramLinkStats stats;
      const int code = run_side(**link, n, 1, [&] {
        char t;
        return c2p.put('d') && p2c.get(t);
      }, &received, &stats);
      if (code) return code;
      if (run.drop == 0 && received != n) return 48;
      return received > n * 8 / 10 ? 0 : 49;
    });
    std::unique_ptr<Nic> nic;
    std::unique_ptr<OobManager> mgr;
    std::unique_ptr<OobListener> listener;
    auto link = open_side(dir, !run.child_connects, "parent", "child",
                          udp_link_config(run.window, 202, run.drop, run.corrupt), ready, nic,
                          mgr, listener);
    REQUIRE(link.ok());
    CHECK((*link)->mtu() == 1440);
    uint64_t received = 0;
    DatagramLinkStats stats;
    const int code = run_side(**link, n, 0, [&] {
      char t;
      return p2c.put('d') && c2p.get(t);
    }, &received, &stats);
    CHECK(code == 0);
    CHECK(child.wait() == 0);
    CHECK(stats.receiver.truncated == 0);
    CHECK(stats.receiver.foreign == 0);
    if (run.drop == 0) {
      CHECK(received == n);
      CHECK(stats.data_lost == 0);
    } else {
      CHECK(received < n);  // the fault model did drop some
      CHECK(received > n * 8 / 10);
      CHECK(stats.receiver.discarded_corrupt > 0);
      CHECK(stats.credit_stalls > 0);
    }
  }
}

TEST_CASE("datagram link over udp: the fault model's drops and corruptions are counted exactly",
          "[datagram_link][udp]") {
  // Without flow control no acks or probes run: every fault decision of a's
  // sender is a data datagram's, so the seed says which ones arrive. The
  // sender waits for each batch to be taken, so the socket never overflows.
  const FaultModel model{7, 0.1, 0.05, {}};
  DatagramLinkConfig lossy = udp_link_config(0, model.seed, model.drop_rate, model.corrupt_rate);
  UdpLinkPair p(lossy, udp_link_config(0));
  REQUIRE(p.ok());
  const uint64_t n = 3200, batch = 32;
  std::vector<bool> arrives(n);
  uint64_t drops = 0, corruptions = 0;
  FaultInjector replay(model);
  for (uint64_t s = 0; s < n; ++s) {
    const FaultAction a = replay.next().action;
    arrives[s] = a == FaultAction::kDeliver;
    drops += a == FaultAction::kDrop;
    corruptions += a == FaultAction::kCorrupt;
  }
  std::atomic<uint64_t> taken{0};
  std::atomic<bool> failed{false};
  std::thread sender([&] {
    std::vector<unsigned char> buf;
    for (uint64_t s = 0; s < n && !failed; ++s) {
      fill(buf, s, 0, p.a->mtu());
      if (p.a->send(buf.data(), buf.size(), Deadline::after(20s)) != Errc::kOk) failed = true;
      const auto end = std::chrono::steady_clock::now() + 20s;
      while ((s + 1) % batch == 0 && taken.load() < s + 1 && !failed) {
        if (std::chrono::steady_clock::now() > end) failed = true;
        std::this_thread::yield();
      }
    }
  });
  std::vector<unsigned char> buf(p.b->mtu());
  uint64_t received = 0, lost_below_last = 0, last = 0;
  for (uint64_t s = 0; s < n; ++s) {
    if (!arrives[s]) {
      ++lost_below_last;
    } else {
      uint64_t seq = 0;
      auto got = p.b->receive(buf.data(), buf.size(), Deadline::after(20s), &seq);
      REQUIRE(got.ok());
      REQUIRE(seq == s);
      REQUIRE(matches(buf.data(), got.value(), seq, 0, p.b->mtu()));
      ++received;
      last = s;
    }
    if ((s + 1) % batch == 0) taken = s + 1;
  }
  sender.join();
  REQUIRE_FALSE(failed);
  for (uint64_t s = last + 1; s < n; ++s) lost_below_last -= !arrives[s];
  const DatagramLinkStats sa = p.a->stats(), sb = p.b->stats();
  CHECK(sa.sender.dropped == drops);
  CHECK(sa.sender.corrupted == corruptions);
  CHECK(sb.receiver.discarded_corrupt == corruptions);
  CHECK(sb.data_received == received);
  CHECK(sb.data_lost == lost_below_last);  // gaps seen below the last arrival
  CHECK(sb.reordered == 0);
  CHECK(sb.receiver.truncated == 0);
}

TEST_CASE("datagram link over udp: a window of W allows exactly W datagrams outstanding",
          "[datagram_link][udp]") {
  DatagramLinkConfig c = udp_link_config(4);
  c.ack_every = 4;
  UdpLinkPair p(c, c);
  REQUIRE(p.ok());
  for (int i = 0; i < 4; ++i) REQUIRE(p.a->send(&i, sizeof i, Deadline::now()) == Errc::kOk);
  CHECK(p.a->send("x", 1, Deadline::now()) == Errc::kTimeout);  // no credit yet
  std::vector<char> buf(p.b->mtu());
  for (int i = 0; i < 4; ++i) {
    auto got = p.b->receive(buf.data(), buf.size(), Deadline::after(5s));
    REQUIRE(got.ok());
    int v;
    std::memcpy(&v, buf.data(), sizeof v);
    CHECK(v == i);
  }
  // The ack for the window comes back over udp: the blocked send goes.
  CHECK(p.a->send("x", 1, Deadline::after(5s)) == Errc::kOk);
  CHECK(p.a->flush(Deadline::now()) == Errc::kTimeout);
  REQUIRE(p.b->receive(buf.data(), buf.size(), Deadline::after(5s)).ok());
  CHECK(p.a->stats().credit_stalls >= 1);
  CHECK(p.b->stats().credit_acks_sent >= 1);
  CHECK(p.a->stats().ring_full_stalls == 0);
}

TEST_CASE("datagram link over udp: an mtu beyond one UDP datagram, or another channel, is refused",
          "[datagram_link][udp]") {
  RuntimeDir dir;
  auto nic = std::move(Nic::open({}).value());
  auto mgr = std::move(OobManager::start(oob_config(dir, "a")).value());
  DatagramLinkConfig big = udp_link_config(4);
  big.mtu = DatagramLink::kMaxUdpMtu + 1;
  const Errc e = DatagramLink::connect(*nic, *mgr, "b", 7, big, Deadline::after(5s)).error();
  CHECK(e == Errc::kInvalidArgument);
  CHECK(error_message(e).find("does not fit one UDP datagram") != std::string::npos);
  big.udp_address = "example.org";
  big.mtu = DatagramLink::kMaxUdpMtu;
  CHECK(DatagramLink::connect(*nic, *mgr, "b", 7, big, Deadline::after(5s)).error() ==
        Errc::kInvalidArgument);
  CHECK(error_message(Errc::kInvalidArgument).find("example.org") != std::string::npos);

  DatagramLinkConfig shm = udp_link_config(4);
  shm.channel = DatagramChannel::kSharedMemory;
  UdpLinkPair mixed(udp_link_config(4), shm);
  CHECK_FALSE(mixed.ok());
  CHECK(mixed.accept_error == Errc::kInvalidArgument);
  CHECK(mixed.connect_error == Errc::kRefused);
}

TEST_CASE("datagram link over udp: close gives kClosed after the peer drained",
          "[datagram_link][udp]") {
  UdpLinkPair p(udp_link_config(4), udp_link_config(4));
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
  CHECK(p.b->send("x", 1, Deadline::after(5s)) == Errc::kClosed);
}

TEST_CASE("datagram link over udp: a killed peer wakes a blocked receive with kPeerDead",
          "[datagram_link][udp][multiprocess]") {
  RuntimeDir dir;
  test::Pipe ready, accepted;
  test::ChildProcess server([&] {
    std::unique_ptr<Nic> nic;
    std::unique_ptr<OobManager> mgr;
    std::unique_ptr<OobListener> listener;
    auto link = open_side(dir, false, "server", "", udp_link_config(4), ready, nic, mgr, listener);
    if (!link) return 13;
    accepted.put('a');
    pause();  // killed by the parent
    return 0;
  });
  NicConfig nc;
  nc.wait_mode = WaitMode::kBlock;  // the survivor really sleeps in ppoll
  auto nic = std::move(Nic::open(nc).value());
  auto oob = std::move(OobManager::start(oob_config(dir, "client")).value());
  char token;
  REQUIRE(ready.get(token));
  auto link = DatagramLink::connect(*nic, *oob, "server", 7, udp_link_config(4), Deadline::after(20s));
  REQUIRE(link.ok());
  REQUIRE(accepted.get(token));
  DatagramLink& l = *link.value();
  Errc receive_result = Errc::kOk;
  std::thread receiver([&] {
    std::vector<char> buf(l.mtu());
    receive_result = l.receive(buf.data(), buf.size(), Deadline::after(20s)).error();
  });
  server.kill_now();
  receiver.join();
  CHECK(receive_result == Errc::kPeerDead);
  CHECK(l.send("x", 1, Deadline::after(1s)) == Errc::kPeerDead);
  server.wait();
}

TEST_CASE("datagram link over udp: arrivals are posted to the event queue directed at the link",
          "[datagram_link][udp]") {
  UdpLinkPair p(udp_link_config(8), udp_link_config(8));
  REQUIRE(p.ok());
  auto queue = p.nic->create_event_queue();
  REQUIRE(queue.ok());
  auto source = queue->add_source(77);
  REQUIRE(source.ok());
  p.b->notify_to(&queue.value(), source.value());
  std::vector<char> buf(p.b->mtu());
  for (int round = 0; round < 50; ++round) {
    CAPTURE(round);
    REQUIRE(p.a->send(&round, sizeof round, Deadline::after(5s)) == Errc::kOk);
    // Woken by the arrival, the consumer reads until nothing is there.
    auto ev = queue->wait(Deadline::after(10s));
    REQUIRE(ev.ok());
    CHECK(ev->user == 77);
    int got_rounds = 0;
    for (;;) {
      auto got = p.b->try_receive(buf.data(), buf.size());
      if (!got) break;
      int v;
      std::memcpy(&v, buf.data(), sizeof v);
      CHECK(v == round);
      ++got_rounds;
    }
    if (got_rounds == 0) {  // the event came before the datagram could be read: it is there
      REQUIRE(p.b->receive(buf.data(), buf.size(), Deadline::after(5s)).ok());
    }
  }
  // Redirected nowhere: nothing more is posted.
  p.b->notify_to(nullptr, 0);
  while (queue->poll()) {
  }
  REQUIRE(p.a->send("x", 1, Deadline::after(5s)) == Errc::kOk);
  REQUIRE(p.b->receive(buf.data(), buf.size(), Deadline::after(5s)).ok());
  CHECK_FALSE(queue->poll());
}

TEST_CASE("datagram link over udp: the fault model's delay line holds frames back in order",
          "[datagram_link][udp]") {
  DatagramLinkConfig slow = udp_link_config(8);
  slow.faults.delay = 2ms;
  UdpLinkPair p(slow, udp_link_config(8));
  REQUIRE(p.ok());
  const uint64_t n = 200;
  std::thread sender([&] {
    std::vector<unsigned char> buf;
    for (uint64_t s = 0; s < n; ++s) {
      fill(buf, s, 0, p.a->mtu());
      if (p.a->send(buf.data(), buf.size(), Deadline::after(20s)) != Errc::kOk) return;
    }
  });
  std::vector<unsigned char> buf(p.b->mtu());
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t s = 0; s < n; ++s) {
    uint64_t seq = ~uint64_t{0};
    auto got = p.b->receive(buf.data(), buf.size(), Deadline::after(20s), &seq);
    REQUIRE(got.ok());
    REQUIRE(seq == s);
    REQUIRE(matches(buf.data(), got.value(), s, 0, p.b->mtu()));
  }
  sender.join();
  CHECK(std::chrono::steady_clock::now() - start >= 2ms);  // at least one delay passed
  CHECK(p.a->stats().data_sent == n);
  CHECK(p.b->stats().data_lost == 0);
}
