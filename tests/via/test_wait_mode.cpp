// Wait modes through VIPL (paper 004 sect. 3.3): the WaitMode of
// VipClanSetNicAttributes and VipClanSetViAttributes round-trips, bad values
// are refused, and a VipRecvWait or VipCQWait that starts before the message
// is sent waits as its mode says (via/DESIGN.md, clan_emul/DESIGN.md
// "Waiting"). The waiting thread is watched through the kernel's accounts of
// it (thread_watch.hpp) while the test's own thread holds the message back:
// poll spins past any adaptive spin and never sleeps, block sleeps having
// spent next to nothing, adaptive spins for its budget and then sleeps. The
// message goes only once the waiter has shown which it does.
#include <sched.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "clan_emul/spin_wait.hpp"
#include "tests/via/thread_watch.hpp"
#include "tests/via/via_test_util.hpp"

using namespace via_test;

namespace {

// The spin budget of these tests' NICs (CLAN_SPIN_NS): long enough for an
// adaptive spin to show in the waiter's CPU time on a loaded machine.
constexpr int64_t kBudgetNs = 500'000'000;
// Less CPU than this before the first sleep: the waiter slept at once. An
// adaptive spin of the whole budget spends more unless the waiter had under
// a fiftieth of a CPU; a block wait spends microseconds.
constexpr int64_t kAtOnceNs = kBudgetNs / 50;
// This much CPU without a sleep outlasts any adaptive spin (at most the
// budget, in wall time): only a poll goes on.
constexpr int64_t kPastBudgetNs = kBudgetNs + kBudgetNs / 2;
constexpr VIP_ULONG kTimeoutMs = 60'000;  // the waits' own; the watch gives up after 30 s

// Sets an environment variable for the life of the object.
class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = ::getenv(name)) old_ = old, had_ = true;
    ::setenv(name, value, 1);
  }
  ~EnvVar() {
    if (had_) ::setenv(name_, old_.c_str(), 1);
    else ::unsetenv(name_);
  }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// The NICs' spin budget is kBudgetNs and CLAN_WAIT_MODE unset (empty) while
// they open.
struct BudgetEnv {
  EnvVar spin{"CLAN_SPIN_NS", std::to_string(kBudgetNs).c_str()};
  EnvVar mode{"CLAN_WAIT_MODE", ""};
};

struct Pair {
  BudgetEnv env;
  RuntimeDir dir;
  Node server, client;
  VIP_VI_HANDLE svi = nullptr, cvi = nullptr;
  explicit Pair(VIP_CQ_HANDLE* rcq = nullptr) {
    REQUIRE(server.open("srv"));
    REQUIRE(client.open("cli"));
    auto sa = vi_attributes(server.ptag, VIP_SERVICE_RELIABLE_DELIVERY);
    auto ca = vi_attributes(client.ptag, VIP_SERVICE_RELIABLE_DELIVERY);
    if (rcq) REQUIRE(VipCreateCQ(server.nic, 64, rcq) == VIP_SUCCESS);
    REQUIRE(VipCreateVi(server.nic, &sa, nullptr, rcq ? *rcq : nullptr, &svi) == VIP_SUCCESS);
    REQUIRE(VipCreateVi(client.nic, &ca, nullptr, nullptr, &cvi) == VIP_SUCCESS);
  }
  void connect() { REQUIRE(connect_pair(server, svi, cvi, "srv")); }
};

VIP_CLAN_NIC_ATTRIBUTES query(VIP_NIC_HANDLE nic) {
  VIP_CLAN_NIC_ATTRIBUTES a{};
  REQUIRE(VipClanQueryNicAttributes(nic, &a) == VIP_SUCCESS);
  return a;
}

void set_nic_mode(VIP_NIC_HANDLE nic, VIP_UINT32 mode) {
  VIP_CLAN_NIC_ATTRIBUTES a = query(nic);
  a.WaitMode = mode;
  REQUIRE(VipClanSetNicAttributes(nic, &a) == VIP_SUCCESS);
}

void set_vi_mode(VIP_VI_HANDLE vi, VIP_UINT32 mode) {
  VIP_CLAN_VI_ATTRIBUTES a{};
  REQUIRE(VipClanQueryViAttributes(vi, &a) == VIP_SUCCESS);
  a.WaitMode = mode;
  REQUIRE(VipClanSetViAttributes(vi, &a) == VIP_SUCCESS);
}

// What the waiting thread did before the message was sent.
struct Watched {
  bool slept = false;             // a voluntary context switch during the wait
  bool spun_past_budget = false;  // kPastBudgetNs of CPU without one
  int64_t cpu_before_sleep = -1;  // the CPU it had spent in the wait when it slept
  int64_t switches = -1;          // its voluntary switches over the whole call
  VIP_RETURN result = VIP_ERROR_RESOURCE;
};

// The waiting thread: the message, through VipCQWait first if there is a CQ.
VIP_RETURN receive(Pair& p, VIP_CQ_HANDLE cq) {
  VIP_DESCRIPTOR* out = nullptr;
  if (cq) {
    VIP_VI_HANDLE vi = nullptr;
    VIP_BOOLEAN recv = VIP_FALSE;
    const VIP_RETURN r = VipCQWait(cq, kTimeoutMs, &vi, &recv);
    if (r != VIP_SUCCESS) return r;
    if (vi != p.svi || recv != VIP_TRUE) return VIP_ERROR_RESOURCE;
  }
  return VipRecvWait(p.svi, kTimeoutMs, &out);
}

// Watches the waiter from its start until it sleeps or spins past any
// adaptive budget (or 30 s pass: neither).
void watch(pthread_t thread, pid_t tid, int64_t start_switches, int64_t start_cpu, Watched& w) {
  const clockid_t clock = cpu_clock_of(thread);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < give_up) {
    const int64_t switches = voluntary_switches(tid);
    const int64_t cpu = cpu_ns(clock) - start_cpu;
    if (switches > start_switches) {
      w.slept = true;
      w.cpu_before_sleep = cpu;
      return;
    }
    if (cpu >= kPastBudgetNs) {
      w.spun_past_budget = true;
      return;
    }
    std::this_thread::yield();
  }
}

// The first message of a connected pair, waited for by a thread of its own
// (no spin history, no producer known on the connection yet, and the load
// rule scripted off: an adaptive wait spins its whole budget) before it is
// sent.
Watched watch_first_message(Pair& p, VIP_CQ_HANDLE cq = nullptr) {
  REQUIRE(VipPostRecv(p.svi, p.server.make(0, 64), p.server.mh) == VIP_SUCCESS);
  std::atomic<pid_t> tid{0};
  std::atomic<int64_t> start_switches{-1}, start_cpu{-1};
  Watched w;
  std::thread waiter([&] {
    // The watching thread is always runnable: on a small host every spin
    // would find the CPUs oversubscribed and end at the grace. The load
    // rule has its own tests (tests/clan_emul/test_wait_mode.cpp).
    clan::spin_history.cpus_oversubscribed = [] { return false; };
    const pid_t me = this_thread_tid();
    start_switches = voluntary_switches(me);
    start_cpu = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
    tid = me;
    w.result = receive(p, cq);
    w.switches = voluntary_switches(me) - start_switches;
  });
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (tid == 0 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
  if (tid != 0 && start_switches >= 0 && start_cpu >= 0) {
    watch(waiter.native_handle(), tid, start_switches, start_cpu, w);
  }
  const VIP_RETURN posted = VipPostSend(p.cvi, p.client.make(0, 8), p.client.mh);
  waiter.join();
  REQUIRE(posted == VIP_SUCCESS);
  VIP_DESCRIPTOR* sent = nullptr;
  REQUIRE(VipSendWait(p.cvi, 10'000, &sent) == VIP_SUCCESS);
  INFO("slept " << w.slept << " after " << w.cpu_before_sleep << " ns of CPU, spun past the budget "
                << w.spun_past_budget << ", voluntary switches " << w.switches);
  REQUIRE(w.result == VIP_SUCCESS);
  return w;
}

// The three places a wait's mode comes from, each with the mode under test.
enum class Where { kNic, kVi, kCq };
const char* to_string(Where w) {
  return w == Where::kNic ? "VipRecvWait, the NIC's mode"
         : w == Where::kVi ? "VipRecvWait, the VI's mode over a NIC that says otherwise"
                           : "VipCQWait, the NIC's mode";
}

Watched watch_in_mode(VIP_UINT32 mode, Where where) {
  VIP_CQ_HANDLE cq = nullptr;
  Pair p(where == Where::kCq ? &cq : nullptr);
  if (where == Where::kVi) {
    set_nic_mode(p.server.nic, mode == VIP_CLAN_WAIT_POLL ? VIP_CLAN_WAIT_BLOCK : VIP_CLAN_WAIT_POLL);
    set_vi_mode(p.svi, mode);
  } else {
    set_nic_mode(p.server.nic, mode);
  }
  p.connect();
  return watch_first_message(p, cq);
}

}  // namespace

TEST_CASE("VIPL: a NIC's wait mode round-trips, and a bad one is refused", "[via][wait_mode]") {
  RuntimeDir dir;
  Node n;
  REQUIRE(n.open("nic"));
  const VIP_CLAN_NIC_ATTRIBUTES defaults = query(n.nic);
  CHECK(defaults.RevokeOnCompletion == VIP_TRUE);
  CHECK(defaults.MappingCacheEntries == 16);
  CHECK(defaults.WaitMode == VIP_CLAN_WAIT_DEFAULT);
  for (VIP_UINT32 mode : {VIP_CLAN_WAIT_POLL, VIP_CLAN_WAIT_BLOCK, VIP_CLAN_WAIT_ADAPTIVE, VIP_CLAN_WAIT_DEFAULT}) {
    VIP_CLAN_NIC_ATTRIBUTES a{VIP_FALSE, 8, mode};
    REQUIRE(VipClanSetNicAttributes(n.nic, &a) == VIP_SUCCESS);
    const VIP_CLAN_NIC_ATTRIBUTES back = query(n.nic);
    CHECK(back.RevokeOnCompletion == VIP_FALSE);
    CHECK(back.MappingCacheEntries == 8);
    CHECK(back.WaitMode == mode);
  }
  VIP_CLAN_NIC_ATTRIBUTES bad{VIP_TRUE, 16, VIP_CLAN_WAIT_BLOCK + 1};
  CHECK(VipClanSetNicAttributes(n.nic, &bad) == VIP_INVALID_PARAMETER);
  CHECK(query(n.nic).MappingCacheEntries == 8);  // unchanged
  CHECK(VipClanQueryNicAttributes(n.nic, nullptr) == VIP_INVALID_PARAMETER);
}

TEST_CASE("VIPL: a VI's wait mode round-trips, and a bad one is refused", "[via][wait_mode]") {
  Pair p;
  VIP_CLAN_VI_ATTRIBUTES a{};
  REQUIRE(VipClanQueryViAttributes(p.svi, &a) == VIP_SUCCESS);
  CHECK(a.WaitMode == VIP_CLAN_WAIT_DEFAULT);
  a.WaitMode = VIP_CLAN_WAIT_POLL;
  REQUIRE(VipClanSetViAttributes(p.svi, &a) == VIP_SUCCESS);
  VIP_CLAN_VI_ATTRIBUTES back{};
  REQUIRE(VipClanQueryViAttributes(p.svi, &back) == VIP_SUCCESS);
  CHECK(back.WaitMode == VIP_CLAN_WAIT_POLL);
  a.WaitMode = VIP_CLAN_WAIT_BLOCK + 1;
  CHECK(VipClanSetViAttributes(p.svi, &a) == VIP_INVALID_PARAMETER);
  REQUIRE(VipClanQueryViAttributes(p.svi, &back) == VIP_SUCCESS);
  CHECK(back.WaitMode == VIP_CLAN_WAIT_POLL);
}


TEST_CASE("VIPL: a poll wait spins past any adaptive budget and never sleeps", "[via][wait_mode]") {
  for (Where where : {Where::kNic, Where::kVi, Where::kCq}) {
    INFO(to_string(where));
    const Watched w = watch_in_mode(VIP_CLAN_WAIT_POLL, where);
    CHECK(w.spun_past_budget);
    CHECK_FALSE(w.slept);
    CHECK(w.switches == 0);
  }
}

TEST_CASE("VIPL: a block wait sleeps at once, before spending any spin budget", "[via][wait_mode]") {
  for (Where where : {Where::kNic, Where::kVi, Where::kCq}) {
    INFO(to_string(where));
    const Watched w = watch_in_mode(VIP_CLAN_WAIT_BLOCK, where);
    INFO("CPU before the sleep " << w.cpu_before_sleep << " ns");
    REQUIRE(w.slept);
    CHECK(w.cpu_before_sleep < kAtOnceNs);
  }
}

TEST_CASE("VIPL: an adaptive wait with no producer known spins for its budget, then sleeps",
          "[via][wait_mode]") {
  for (Where where : {Where::kNic, Where::kVi, Where::kCq}) {
    INFO(to_string(where));
    const Watched w = watch_in_mode(VIP_CLAN_WAIT_ADAPTIVE, where);
    INFO("CPU before the sleep " << w.cpu_before_sleep << " ns");
    REQUIRE(w.slept);
    CHECK(w.cpu_before_sleep >= kAtOnceNs);
  }
}
