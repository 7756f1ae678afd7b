// A loopback microbenchmark of the PIO data path, hidden from the default
// run (`via_tests "[.bench]"`): what a 0-byte message costs in software,
// with both VIs in this process and one thread doing bench_via_latency's ping-pong
// steps (post send, VipRecvWait, repost, VipSendWait), each call timed.
// Prints figures; asserts only that every message arrives.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>

#include "tests/via/via_test_util.hpp"

using namespace via_test;

namespace {

using Clock = std::chrono::steady_clock;

struct PioPair : ViPair {
  PioPair() {
    REQUIRE(open("lbsrv", "lbcli"));
    REQUIRE(connect());
    VIP_CLAN_VI_ATTRIBUTES x{VIP_FALSE, VIP_FALSE, VIP_CLAN_TRANSFER_PIO, 1024, VIP_CLAN_WAIT_DEFAULT};
    REQUIRE(VipClanSetViAttributes(svi, &x) == VIP_SUCCESS);
    REQUIRE(VipClanSetViAttributes(cvi, &x) == VIP_SUCCESS);
  }
};

double ns_per(Clock::duration d, long n) {
  return std::chrono::duration<double, std::nano>(d).count() / static_cast<double>(n);
}

}  // namespace

TEST_CASE("loopback: software cost of each call of a 0-byte PIO exchange", "[.bench][via]") {
  PioPair p;
  // Descriptors 0-3 receive, 8 sends, on each side.
  for (int k = 0; k < 4; ++k) {
    REQUIRE(VipPostRecv(p.svi, p.server.make(k, 64), p.server.mh) == VIP_SUCCESS);
    REQUIRE(VipPostRecv(p.cvi, p.client.make(k, 64), p.client.mh) == VIP_SUCCESS);
  }
  constexpr long kN = 200000;
  Clock::duration post_send{}, recv_wait{}, post_recv{}, send_wait{};
  auto step = [&](Node& from, VIP_VI_HANDLE fvi, Node& to, VIP_VI_HANDLE tvi) {
    auto t0 = Clock::now();
    REQUIRE(VipPostSend(fvi, from.make(8, 0), from.mh) == VIP_SUCCESS);
    auto t1 = Clock::now();
    VIP_DESCRIPTOR* d = nullptr;
    REQUIRE(VipRecvWait(tvi, 5000, &d) == VIP_SUCCESS);
    auto t2 = Clock::now();
    const size_t slot = (reinterpret_cast<unsigned char*>(d) - to.mem) / 64;
    REQUIRE(VipPostRecv(tvi, to.make(slot, 64), to.mh) == VIP_SUCCESS);
    auto t3 = Clock::now();
    VIP_DESCRIPTOR* s = nullptr;
    REQUIRE(VipSendWait(fvi, 5000, &s) == VIP_SUCCESS);
    auto t4 = Clock::now();
    post_send += t1 - t0;
    recv_wait += t2 - t1;
    post_recv += t3 - t2;
    send_wait += t4 - t3;
  };
  for (long i = 0; i < kN; ++i) {
    step(p.client, p.cvi, p.server, p.svi);
    step(p.server, p.svi, p.client, p.cvi);
  }
  std::printf("loopback 1 thread, ns per call (incl. a clock read): PostSend %.1f  RecvWait %.1f  "
              "PostRecv %.1f  SendWait %.1f\n",
              ns_per(post_send, 2 * kN), ns_per(recv_wait, 2 * kN), ns_per(post_recv, 2 * kN),
              ns_per(send_wait, 2 * kN));
}
