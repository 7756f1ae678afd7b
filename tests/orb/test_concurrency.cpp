// Many clients on one object at once: threads sharing the test process's ORB
// (and its connections) plus separate client processes (their own connections).
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "orb/generate.hpp"
#include "orb/orb_fixture.hpp"

using namespace clan::orbtest;

TEST_CASE("many concurrent clients: 8 threads x 200 calls and 4 processes x 200 calls on one object",
          "[orb]") {
  ORB_TEST_OVER_EVERY_TRANSPORT();
  constexpr int kThreads = 8, kProcesses = 4, kCalls = 200;
  Server server(t, mode);
  echo_var e = server.echo();
  REQUIRE(!CORBA::is_nil(e));
  std::atomic<unsigned long> retried{0};
  if (t.small_listen_backlog)
    omniORB::installTransientExceptionHandler(e, &retried, retry_refused_connect);

  // Processes first (fork + exec from this thread), so that they overlap the threads.
  std::vector<std::unique_ptr<Process>> clients;
  for (int p = 0; p < kProcesses; ++p) {
    std::vector<std::string> args{"--ior", server.echo_ior(), "--calls", std::to_string(kCalls),
                                  "--size", "100", "--tag", "p" + std::to_string(p)};
    if (t.small_listen_backlog) args.push_back("--retry-connect");
    clients.push_back(start_client(args));
  }

  // Catch2 is not thread-safe: threads only count; the main thread checks.
  std::atomic<int> ok{0}, wrong{0};
  std::mutex err_mu;
  std::string first_error;
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th) {
    threads.emplace_back([&, th] {
      for (int i = 0; i < kCalls; ++i) {
        std::string m = "t" + std::to_string(th) + "-" + std::to_string(i);
        m.append(static_cast<size_t>(i % 64), 'x');
        try {
          CORBA::String_var r = e->echoString(m.c_str());
          (m == r.in() ? ok : wrong)++;
        } catch (const CORBA::SystemException& ex) {
          wrong++;
          std::lock_guard lock(err_mu);
          if (first_error.empty()) first_error = ex._name();
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  INFO("first error in a client thread: " << first_error);
  INFO("refused connects retried in this process: " << retried);
  CHECK(ok == kThreads * kCalls);
  CHECK(wrong == 0);

  for (int p = 0; p < kProcesses; ++p) {
    INFO("client process " << p);
    CHECK(clients[static_cast<size_t>(p)]->wait(std::chrono::seconds(40)) == kClientOk);
  }
  CHECK(server.stop() == 0);
}
