// VipClanCQWake: a thread blocked in VipCQWait returns VIP_NOT_DONE; a wake
// with nobody waiting is kept for the next caller, once per call.
#include <catch2/catch.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>

#include "tests/via/via_test_util.hpp"

using namespace via_test;

namespace {
// Waits (yielding) until `p` holds, at most 10 s.
template <class Pred>
bool eventually_true(Pred p) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!p()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::yield();
  }
  return true;
}

// The scheduler state of one of our threads ('S': asleep, e.g. on a futex).
char thread_state(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  std::getline(in, line);
  const auto paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() ? '?' : line[paren + 2];
}

// A server VI whose receive queue reports to a CQ, and a client VI without
// CQs, on two NICs in this process; connect() joins them.
struct CqPair {
  RuntimeDir dir;
  Node server, client;
  VIP_CQ_HANDLE cq = nullptr;
  VIP_VI_HANDLE svi = nullptr, cvi = nullptr;
  std::string name;

  explicit CqPair(const std::string& n) : name(n) {
    REQUIRE(server.open((n + "s").c_str()));
    REQUIRE(client.open((n + "c").c_str()));
    REQUIRE(VipCreateCQ(server.nic, 1024, &cq) == VIP_SUCCESS);
    auto sa = vi_attributes(server.ptag);
    auto ca = vi_attributes(client.ptag);
    REQUIRE(VipCreateVi(server.nic, &sa, nullptr, cq, &svi) == VIP_SUCCESS);
    REQUIRE(VipCreateVi(client.nic, &ca, nullptr, nullptr, &cvi) == VIP_SUCCESS);
  }
  void connect() { REQUIRE(connect_pair(server, svi, cvi, name + "s")); }
  // One 8-byte message from the client, sent.
  void send() {
    VIP_DESCRIPTOR* d = nullptr;
    REQUIRE(VipPostSend(cvi, client.make(10, 8), client.mh) == VIP_SUCCESS);
    REQUIRE(VipSendWait(cvi, 10000, &d) == VIP_SUCCESS);
  }
  ~CqPair() {
    VipDisconnect(cvi);
    CHECK(VipDestroyVi(cvi) == VIP_SUCCESS);
    VipDisconnect(svi);
    CHECK(VipDestroyVi(svi) == VIP_SUCCESS);
    CHECK(VipDestroyCQ(cq) == VIP_SUCCESS);
  }
};

}  // namespace

TEST_CASE("VipClanCQWake: wakes a blocked VipCQWait, which returns VIP_NOT_DONE", "[via][cq]") {
  RuntimeDir dir;
  Node n;
  REQUIRE(n.open("cqwake"));
  VIP_CQ_HANDLE cq = nullptr;
  REQUIRE(VipCreateCQ(n.nic, 16, &cq) == VIP_SUCCESS);
  auto waiter = std::async(std::launch::async, [cq] {
    VIP_VI_HANDLE vi = nullptr;
    VIP_BOOLEAN recv = VIP_FALSE;
    return VipCQWait(cq, VIP_INFINITE, &vi, &recv);
  });
  REQUIRE(VipClanCQWake(cq) == VIP_SUCCESS);
  CHECK(waiter.get() == VIP_NOT_DONE);
  REQUIRE(VipDestroyCQ(cq) == VIP_SUCCESS);
}

TEST_CASE("VipClanCQWake: a wake before the wait is kept, one per call", "[via][cq]") {
  RuntimeDir dir;
  Node n;
  REQUIRE(n.open("cqwake"));
  VIP_CQ_HANDLE cq = nullptr;
  REQUIRE(VipCreateCQ(n.nic, 16, &cq) == VIP_SUCCESS);
  REQUIRE(VipClanCQWake(cq) == VIP_SUCCESS);
  REQUIRE(VipClanCQWake(cq) == VIP_SUCCESS);
  VIP_VI_HANDLE vi = nullptr;
  VIP_BOOLEAN recv = VIP_FALSE;
  CHECK(VipCQWait(cq, 1000, &vi, &recv) == VIP_NOT_DONE);
  CHECK(VipCQWait(cq, 1000, &vi, &recv) == VIP_NOT_DONE);
  CHECK(VipCQWait(cq, 10, &vi, &recv) == VIP_TIMEOUT);
  CHECK(VipClanCQWake(nullptr) == VIP_INVALID_PARAMETER);
  REQUIRE(VipDestroyCQ(cq) == VIP_SUCCESS);
}

// A thread in VipRecvWait and another polling the VI's receive CQ: whichever
// progresses the VI first takes the transfer record; the other must still
// see the completion (VipRecvWait used to sleep on, its record gone).
TEST_CASE("VipRecvWait sees a completion another thread found through the CQ", "[via][cq]") {
  CqPair p("rw");
  VIP_VI_HANDLE svi = p.svi;
  p.connect();
  constexpr int kRounds = 200;
  int received = 0;
  for (int i = 0; i < kRounds; ++i) {
    REQUIRE(VipPostRecv(svi, p.server.make(0, 64), p.server.mh) == VIP_SUCCESS);
    std::promise<pid_t> tid;
    auto waiter = std::async(std::launch::async, [svi, &tid] {
      tid.set_value(static_cast<pid_t>(syscall(SYS_gettid)));
      VIP_DESCRIPTOR* d = nullptr;
      return VipRecvWait(svi, 10000, &d);  // the bound only turns a hang into a failure
    });
    // Let the waiter fall asleep first, so this thread's VipCQWait takes the
    // record while it is being woken.
    const pid_t t = tid.get_future().get();
    while (thread_state(t) != 'S') std::this_thread::yield();
    p.send();
    VIP_VI_HANDLE vi = nullptr;
    VIP_BOOLEAN recv = VIP_FALSE;
    REQUIRE(VipCQWait(p.cq, 10000, &vi, &recv) == VIP_SUCCESS);
    CHECK(vi == svi);
    if (waiter.get() == VIP_SUCCESS) ++received;
  }
  CHECK(received == kRounds);
}

TEST_CASE("VipClanCQNotify mutes a VI's receive CQ, VipClanRecvReady looks without dequeuing",
          "[via][cq]") {
  CqPair p("cn");
  VIP_VI_HANDLE svi = p.svi, cvi = p.cvi;
  VIP_CQ_HANDLE cq = p.cq;
  Node& server = p.server;
  CHECK(VipClanCQNotify(cvi, VIP_FALSE) == VIP_INVALID_STATE);  // no receive CQ
  CHECK(VipClanCQNotify(nullptr, VIP_FALSE) == VIP_INVALID_PARAMETER);
  VIP_BOOLEAN ready = VIP_TRUE;
  CHECK(VipClanRecvReady(svi, nullptr) == VIP_INVALID_PARAMETER);
  CHECK(VipClanRecvReady(nullptr, &ready) == VIP_INVALID_PARAMETER);
  REQUIRE(VipClanCQNotify(svi, VIP_FALSE) == VIP_SUCCESS);  // before connecting: kept
  for (size_t i = 0; i < 3; ++i) REQUIRE(VipPostRecv(svi, server.make(i, 64), server.mh) == VIP_SUCCESS);
  p.connect();
  VIP_VI_HANDLE vi = nullptr;
  VIP_BOOLEAN recv = VIP_FALSE;
  VIP_DESCRIPTOR* d = nullptr;

  REQUIRE(VipClanRecvReady(svi, &ready) == VIP_SUCCESS);
  CHECK(ready == VIP_FALSE);
  // Muted: the message arrives, is seen as ready, and makes no CQ entry.
  p.send();
  REQUIRE(VipClanRecvReady(svi, &ready) == VIP_SUCCESS);
  CHECK(ready == VIP_TRUE);
  REQUIRE(VipClanRecvReady(svi, &ready) == VIP_SUCCESS);
  CHECK(ready == VIP_TRUE);  // still there: nothing was dequeued
  CHECK(VipCQDone(cq, &vi, &recv) == VIP_NOT_DONE);
  REQUIRE(VipRecvDone(svi, &d) == VIP_SUCCESS);
  CHECK(d == server.desc(0));
  REQUIRE(VipClanRecvReady(svi, &ready) == VIP_SUCCESS);
  CHECK(ready == VIP_FALSE);

  // Unmuted: the next message is entered in the CQ again.
  REQUIRE(VipClanCQNotify(svi, VIP_TRUE) == VIP_SUCCESS);
  p.send();
  REQUIRE(VipCQWait(cq, 10000, &vi, &recv) == VIP_SUCCESS);
  CHECK(vi == svi);
  CHECK(recv == VIP_TRUE);
  REQUIRE(VipRecvDone(svi, &d) == VIP_SUCCESS);
  CHECK(d == server.desc(1));

  // Muted while a thread sleeps in VipRecvWait: the arrival still wakes it.
  REQUIRE(VipClanCQNotify(svi, VIP_FALSE) == VIP_SUCCESS);
  auto waiter = std::async(std::launch::async, [svi] {
    VIP_DESCRIPTOR* out = nullptr;
    return VipRecvWait(svi, 10000, &out);
  });
  p.send();
  CHECK(waiter.get() == VIP_SUCCESS);
  CHECK(VipCQDone(cq, &vi, &recv) == VIP_NOT_DONE);

}

TEST_CASE("In readiness mode a VI keeps at most one receive entry in its CQ however many messages it takes",
          "[via][cq]") {
  // A server's worker takes messages itself (VipRecvWait) while the VI stays
  // armed: the CQ must not fill with an entry per message, or a new VI's one
  // entry would wait behind them all.
  constexpr int kMessages = 300;
  CqPair p("cr");
  REQUIRE(VipClanCQNotify(p.svi, VIP_TRUE) == VIP_SUCCESS);
  for (size_t i = 0; i < 4; ++i) REQUIRE(VipPostRecv(p.svi, p.server.make(i, 64), p.server.mh) == VIP_SUCCESS);
  p.connect();
  VIP_DESCRIPTOR* d = nullptr;
  for (int k = 0; k < kMessages; ++k) {
    p.send();
    REQUIRE(VipRecvWait(p.svi, 10000, &d) == VIP_SUCCESS);
    REQUIRE(VipPostRecv(p.svi, p.server.make(static_cast<size_t>(k % 4), 64), p.server.mh) == VIP_SUCCESS);
  }
  VIP_VI_HANDLE vi = nullptr;
  VIP_BOOLEAN recv = VIP_FALSE;
  REQUIRE(VipCQDone(p.cq, &vi, &recv) == VIP_SUCCESS);
  CHECK(vi == p.svi);
  CHECK(recv == VIP_TRUE);
  CHECK(VipCQDone(p.cq, &vi, &recv) == VIP_NOT_DONE);
  // Once that entry is taken, the next completion makes a new one.
  p.send();
  REQUIRE(VipCQWait(p.cq, 10000, &vi, &recv) == VIP_SUCCESS);
  CHECK(vi == p.svi);
  CHECK(VipCQDone(p.cq, &vi, &recv) == VIP_NOT_DONE);
  REQUIRE(VipRecvDone(p.svi, &d) == VIP_SUCCESS);
}

TEST_CASE("Without readiness mode a VI's CQ has an entry per receive completion", "[via][cq]") {
  CqPair p("cp");
  for (size_t i = 0; i < 3; ++i) REQUIRE(VipPostRecv(p.svi, p.server.make(i, 64), p.server.mh) == VIP_SUCCESS);
  p.connect();
  for (int k = 0; k < 3; ++k) p.send();
  VIP_VI_HANDLE vi = nullptr;
  VIP_BOOLEAN recv = VIP_FALSE;
  for (int k = 0; k < 3; ++k) {
    REQUIRE(VipCQWait(p.cq, 10000, &vi, &recv) == VIP_SUCCESS);
    CHECK(vi == p.svi);
    CHECK(recv == VIP_TRUE);
  }
  CHECK(VipCQDone(p.cq, &vi, &recv) == VIP_NOT_DONE);
  VIP_DESCRIPTOR* d = nullptr;
  for (size_t k = 0; k < 3; ++k) {
    REQUIRE(VipRecvDone(p.svi, &d) == VIP_SUCCESS);
    CHECK(d == p.server.desc(k));
  }
}

TEST_CASE("Three threads waiting on one CQ take every completion once", "[via][cq]") {
  CqPair p("cm");
  constexpr int kMessages = 48;
  for (size_t i = 0; i < kMessages; ++i) {
    REQUIRE(VipPostRecv(p.svi, p.server.make(i, 64), p.server.mh) == VIP_SUCCESS);
  }
  p.connect();
  std::atomic<int> taken{0}, wrong{0};
  std::atomic<bool> done{false};
  auto consumer = [&] {
    while (!done.load()) {
      VIP_VI_HANDLE vi = nullptr;
      VIP_BOOLEAN recv = VIP_FALSE;
      const VIP_RETURN r = VipCQWait(p.cq, 10000, &vi, &recv);
      if (r == VIP_SUCCESS) {
        taken.fetch_add(1);
        if (vi != p.svi || recv != VIP_TRUE) wrong.fetch_add(1);
      } else if (r != VIP_NOT_DONE) {
        wrong.fetch_add(1);
        return;
      }
    }
  };
  std::thread a(consumer), b(consumer), c(consumer);
  for (int k = 0; k < kMessages; ++k) p.send();
  const bool all = eventually_true([&] { return taken.load() >= kMessages; });
  done = true;
  for (int k = 0; k < 3; ++k) VipClanCQWake(p.cq);  // each waiter returns VIP_NOT_DONE
  a.join();
  b.join();
  c.join();
  CHECK(all);
  CHECK(taken.load() == kMessages);
  CHECK(wrong.load() == 0);
  VIP_VI_HANDLE vi = nullptr;
  VIP_BOOLEAN recv = VIP_FALSE;
  CHECK(VipCQDone(p.cq, &vi, &recv) == VIP_NOT_DONE);
  VIP_DESCRIPTOR* d = nullptr;
  for (size_t k = 0; k < kMessages; ++k) {
    REQUIRE(VipRecvDone(p.svi, &d) == VIP_SUCCESS);
    CHECK(d == p.server.desc(k));
  }
}
