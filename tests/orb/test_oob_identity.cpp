// Out-of-band identity end to end: a hostile local process (oob_forger)
// tells the server that this client's node has restarted, while one of the
// client's calls is held in the servant. The server believes a node's news
// only from that node, so the call in flight completes.
#include <signal.h>

#include <atomic>
#include <string>
#include <thread>

#include "orb/orb_fixture.hpp"
#include "orb/process.hpp"

using namespace clan::orbtest;

TEST_CASE("a forged out-of-band HEARTBEAT naming the client leaves its call in flight to complete",
          "[orb]") {
  const Transport t = GENERATE(from_range(fabric_transports()));
  INFO("transport " << t.name);
  Server server(t, Threading::kPerConnection);
  echo_var e = server.echo();
  REQUIRE(!CORBA::is_nil(e));
  CORBA::String_var warm = e->echoString("warm-up");  // the server now knows this process's node

  std::atomic<int> forger_exit{-1};
  std::atomic<bool> released{false};
  std::thread hostile([&] {
    if (!server.wait_stalled()) return;
    Process forger(OOB_FORGER, {std::to_string(server.pid()), std::to_string(::getpid())});
    forger.wait_for_line("judged");
    forger_exit = forger.wait();
    released = server.release_one();
  });
  CORBA::String_var r;
  std::string ex = system_exception_of([&] { r = e->echoString(kStallMessage); });
  hostile.join();
  CHECK(forger_exit == 0);
  CHECK(released);
  INFO("exception: " << (ex.empty() ? "none" : ex));
  CHECK(ex.empty());
  CHECK((r.in() != nullptr && std::string(r.in()) == kStallMessage));
  CORBA::String_var after = e->echoString("after the forgery");
  CHECK(std::string(after.in()) == "after the forgery");
  CHECK(server.stop() == 0);
}
