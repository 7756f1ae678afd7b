// Calls that do not complete normally: a client-side call timeout, the server
// killed while a call is blocked in its servant, and a client killed while
// its call is blocked. Servants block on the server's stdin pipe ("@stall"),
// never on a sleep; the test learns that a call is blocked from the server's
// "stalled" line.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "orb/generate.hpp"
#include "orb/orb_fixture.hpp"

using namespace clan::orbtest;

// omniORB 4.2 reports a call timeout as CORBA::TIMEOUT unless the client
// ORB runs with -ORBthrowTransientOnTimeOut 1, then as TRANSIENT: both are
// checked, the first in this process, the second in a client process.
TEST_CASE("call timeout: a stalled servant gives TIMEOUT (TRANSIENT if asked for), then a call works",
          "[orb]") {
  ORB_TEST_OVER_EVERY_TRANSPORT();
  Server server(t, mode);
  echo_var e = server.echo();
  REQUIRE(!CORBA::is_nil(e));
  CORBA::String_var warm = e->echoString("warm-up");  // connection already open

  // This process: a timeout on the object reference.
  omniORB::setClientCallTimeout(e, 200);
  CHECK(system_exception_of([&] { CORBA::String_var r = e->echoString(kStallMessage); }) ==
        "TIMEOUT");
  // The call timed out in the servant, not on the way there.
  REQUIRE(server.wait_stalled());

  // Another process: the ORB-wide option, with TRANSIENT asked for. Its
  // budget also covers making the connection, so it is larger: on a busy
  // 2-CPU host 200 ms could run out before the call reached the servant.
  auto client = start_client({"--ior", server.echo_ior(), "--stall", "--expect", "TRANSIENT",
                              "-ORBclientCallTimeOutPeriod", "1000",
                              "-ORBthrowTransientOnTimeOut", "1"});
  REQUIRE(server.wait_stalled());
  CHECK(client->wait() == kClientOk);

  REQUIRE(server.release_one());
  REQUIRE(server.release_one());

  // Bound the later call generously: it only has to work.
  omniORB::setClientCallTimeout(e, 10000);
  CORBA::String_var after;
  CHECK(system_exception_of([&] { after = e->echoString("after the timeout"); }).empty());
  CHECK((after.in() != nullptr && std::string(after.in()) == "after the timeout"));
  auto later = start_client({"--ior", server.echo_ior(), "--calls", "5", "--tag", "later",
                             "-ORBclientCallTimeOutPeriod", "10000"});
  CHECK(later->wait() == kClientOk);
  CHECK(server.stop() == 0);
}

TEST_CASE("server killed mid-call: the client gets COMM_FAILURE or TRANSIENT", "[orb]") {
  ORB_TEST_OVER_EVERY_TRANSPORT();
  Server server(t, mode);
  echo_var e = server.echo();
  REQUIRE(!CORBA::is_nil(e));

  // The killer waits for the servant to hold the call, then SIGKILLs the server.
  std::atomic<bool> saw_stall{false};
  std::thread killer([&] {
    saw_stall = server.wait_stalled();
    server.kill_now();
  });
  // No call timeout: the failure must come from the connection breaking. The
  // test's ctest TIMEOUT bounds the wait.
  std::string ex = system_exception_of([&] { CORBA::String_var r = e->echoString(kStallMessage); });
  killer.join();
  CHECK(saw_stall);
  INFO("exception: " << (ex.empty() ? "none" : ex));
  CHECK((ex == "COMM_FAILURE" || ex == "TRANSIENT"));
  CHECK(server.wait() == 128 + SIGKILL);
}

TEST_CASE("client killed mid-call: the server survives and serves the next client", "[orb]") {
  ORB_TEST_OVER_EVERY_TRANSPORT();
  Server server(t, mode);

  auto victim = start_client({"--ior", server.echo_ior(), "--stall"});
  REQUIRE(server.wait_stalled());
  victim->kill_now();
  CHECK(victim->wait() == 128 + SIGKILL);

  // Another client process, while the dead client's call is still held.
  auto next = start_client({"--ior", server.echo_ior(), "--calls", "20", "--tag", "next"});
  CHECK(next->wait() == kClientOk);

  // Let the orphaned call finish (its reply has nowhere to go), then this
  // process's client and the server's clean shutdown.
  REQUIRE(server.release_one());
  echo_var e = server.echo();
  CORBA::String_var r = e->echoString("still serving");
  CHECK(std::string(r.in()) == "still serving");
  CHECK(server.stop() == 0);
}

namespace {

// Whether /proc says `pid` is stopped by a signal (state 'T').
bool process_stopped(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'T';
}

bool wait_until_stopped(pid_t pid, std::chrono::milliseconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (!process_stopped(pid)) {
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

// A debugger breakpoint, a long garbage collection or a swap stall stops a
// server without killing it: as over tcp, the client's call waits for it.
TEST_CASE("server stopped by SIGSTOP mid-call for seconds then continued: the call completes", "[orb]") {
  const Transport t = GENERATE(from_range(fabric_transports()));
  INFO("transport " << t.name);
  // Several seconds, far beyond the heartbeat interval and giop:otp's
  // retransmission backoff: on one host a stopped peer is not timed out.
  constexpr auto kStopped = std::chrono::seconds(7);
  Server server(t, Threading::kPerConnection);
  echo_var e = server.echo();
  REQUIRE(!CORBA::is_nil(e));
  CORBA::String_var warm = e->echoString("warm-up");

  std::atomic<bool> stopped{false}, released{false};
  std::thread stopper([&] {
    if (!server.wait_stalled()) return;
    ::kill(server.pid(), SIGSTOP);
    stopped = wait_until_stopped(server.pid(), std::chrono::seconds(20));
    std::this_thread::sleep_for(kStopped);  // the stop itself is what is under test
    ::kill(server.pid(), SIGCONT);
    released = server.release_one();
  });
  // No call timeout: only the server's death may end this call early.
  CORBA::String_var r;
  std::string ex = system_exception_of([&] { r = e->echoString(kStallMessage); });
  stopper.join();
  CHECK(stopped);
  CHECK(released);
  INFO("exception: " << (ex.empty() ? "none" : ex));
  CHECK(ex.empty());
  CHECK((r.in() != nullptr && std::string(r.in()) == kStallMessage));
  // And the connection still serves.
  CORBA::String_var after = e->echoString("after the stop");
  CHECK(std::string(after.in()) == "after the stop");
  CHECK(server.stop() == 0);
}
