// giop:via at its limits: a server at the common soft limit of 1024
// descriptors holds hundreds of connections; a connection the server cannot
// accept or keep is refused or broken at once, so that its client hears of
// it at once instead of at its call timeout.
#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "orb/orb_fixture.hpp"
#include "via/vipl.h"
#include "via/via_test_util.hpp"

using namespace clan::orbtest;
using namespace std::chrono_literals;

namespace {

Transport via_transport(const std::string& endpoint = "giop:via::") { return {"via", {endpoint}}; }

// Open descriptors, but for threads' own files (/proc/<pid>/task/<tid>/...),
// which come and go with omniORB's idle threads, not with connections.
size_t open_descriptors(pid_t pid) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    std::error_code ec;
    const std::string target = std::filesystem::read_symlink(e.path(), ec).string();
    if (ec || target.find("/task/") == std::string::npos) ++n;
  }
  return n;
}

// A call timeout far longer than any answer should take: a client that
// waited for it instead of being told would show.
constexpr auto kCallTimeout = 40s;
constexpr auto kPromptly = kCallTimeout / 4;

template <class F>
std::chrono::steady_clock::duration time_of(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::steady_clock::now() - start;
}

}  // namespace

TEST_CASE("a giop:via server limited to 1024 descriptors holds 400 connections, a call over each",
          "[orb][via]") {
  const Threading mode = GENERATE(Threading::kPerConnection, Threading::kPool);
  INFO("server " << to_string(mode));
  constexpr int kClients = 4, kConnectionsEach = 100;
  // Pool mode: a thread for each stalled call. Each client holds more
  // connections than the default per-client cap.
  Server server(via_transport(), mode,
                {"-ORBmaxServerThreadPoolSize", "500", "-ORBclanMaxConnectionsPerClient", "0"}, false,
                {"TEST_PEER_MAX_FDS=1024"});
  const size_t idle_fds = open_descriptors(server.pid());
  // Each client thread's call stalls in the servant, so each holds a
  // connection of its own until all of them are there.
  std::vector<std::unique_ptr<Process>> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(start_client(
        {"--ior", server.echo_ior(), "--stall", "--threads", std::to_string(kConnectionsEach), "--tag",
         "c" + std::to_string(i), "-ORBmaxGIOPConnectionPerServer", std::to_string(kConnectionsEach),
         "-ORBclientCallTimeOutPeriod", std::to_string(kCallTimeout / 1ms)}));
  }
  int stalled = 0;
  while (stalled < kClients * kConnectionsEach && server.wait_stalled(20s)) ++stalled;
  INFO(stalled << " calls stalled, " << open_descriptors(server.pid()) << " descriptors open");
  CHECK(stalled == kClients * kConnectionsEach);
  for (int i = 0; i < stalled; ++i) REQUIRE(server.release_one());
  for (auto& c : clients) CHECK(c->wait(60s) == kClientOk);
  // Every connection closed cleanly: the server's descriptors come back
  // (after the connection manager's idle grace for departed peers).
  size_t fds = open_descriptors(server.pid());
  for (auto limit = std::chrono::steady_clock::now() + 20s;
       fds > idle_fds + 8 && std::chrono::steady_clock::now() < limit; fds = open_descriptors(server.pid())) {
    std::this_thread::sleep_for(50ms);  // poll interval
  }
  CHECK(fds <= idle_fds + 8);
  CHECK(server.stop() == 0);
}

TEST_CASE("a giop:via server refuses at once a VI whose attributes it cannot accept", "[orb][via]") {
  const Threading mode = GENERATE(Threading::kPerConnection, Threading::kPool);
  INFO("server " << to_string(mode));
  const std::string node = "vref" + std::to_string(getpid());
  Server server(via_transport("giop:via:" + node + ":4242"), mode);
  // A VIPL client whose VI takes smaller messages than giop:via's: the
  // server's VipConnectAccept fails with VIP_INVALID_MTU.
  via_test::Node client;
  REQUIRE(client.open(("vrc" + std::to_string(getpid())).c_str()));
  VIP_VI_ATTRIBUTES a = via_test::vi_attributes(client.ptag);
  a.MaxTransferSize = 1024;
  VIP_VI_HANDLE vi = nullptr;
  REQUIRE(VipCreateVi(client.nic, &a, nullptr, nullptr, &vi) == VIP_SUCCESS);
  via_test::Address local("", ""), remote(node, "4242");
  VIP_VI_ATTRIBUTES remote_attrs{};
  VIP_RETURN r = VIP_SUCCESS;
  const auto took = time_of([&] {
    r = VipConnectRequest(vi, local.get(), remote.get(), static_cast<VIP_ULONG>(kCallTimeout / 1ms),
                          &remote_attrs);
  });
  CHECK(r == VIP_REJECT);
  CHECK(took < kPromptly);
  CHECK(VipDestroyVi(vi) == VIP_SUCCESS);
  // The server serves on.
  echo_var e = server.echo();
  REQUIRE(!CORBA::is_nil(e));
  CORBA::String_var reply;
  CHECK(system_exception_of([&] { reply = e->echoString("after the refusal"); }).empty());
  CHECK((reply.in() != nullptr && std::string(reply.in()) == "after the refusal"));
  CHECK(server.stop() == 0);
}

TEST_CASE("a giop:via server out of descriptors breaks the connection whose reply it cannot send: "
          "COMM_FAILURE at once",
          "[orb][via]") {
  const Threading mode = GENERATE(Threading::kPerConnection, Threading::kPool);
  INFO("server " << to_string(mode));
  Server server(via_transport(), mode);
  // No locate request first: the stalled call is the first message on its
  // connection, so its reply is the server's first send there, which maps
  // the client's receive buffers and needs a descriptor to do so.
  auto client = start_client({"--ior", server.echo_ior(), "--stall", "--expect", "COMM_FAILURE",
                              "-ORBverifyObjectExistsAndType", "0", "-ORBclientCallTimeOutPeriod",
                              std::to_string(kCallTimeout / 1ms)});
  REQUIRE(server.wait_stalled());
  REQUIRE(server.exhaust_fds());
  int code = -1;
  const auto took = time_of([&] {
    REQUIRE(server.release_one());
    code = client->wait(60s);
  });
  CHECK(code == kClientOk);
  CHECK(took < kPromptly);
  CHECK(server.stop() == 0);
}

TEST_CASE("a giop:via server out of descriptors refuses a new connection at once: TRANSIENT", "[orb][via]") {
  const Threading mode = GENERATE(Threading::kPerConnection, Threading::kPool);
  INFO("server " << to_string(mode));
  Server server(via_transport(), mode);
  echo_var e = server.echo();
  REQUIRE(!CORBA::is_nil(e));
  omniORB::setClientCallTimeout(e, static_cast<CORBA::ULong>(kCallTimeout / 1ms));
  CORBA::String_var warm = e->echoString("warm-up");  // a connection, and the peers know each other
  REQUIRE(server.exhaust_fds());
  // The first connection busy in a stalled call, a second call needs a
  // second connection, which the server cannot make.
  std::string stalled_outcome = "not run";
  std::thread stalled([&] {
    stalled_outcome = system_exception_of([&] { CORBA::String_var r = e->echoString(kStallMessage); });
  });
  REQUIRE(server.wait_stalled());
  std::string refused;
  const auto took = time_of([&] {
    refused = system_exception_of([&] { CORBA::String_var r = e->echoString("a second connection"); });
  });
  CHECK(refused == "TRANSIENT");
  CHECK(took < kPromptly);
  REQUIRE(server.release_one());
  stalled.join();
  CHECK(stalled_outcome.empty());  // its connection was made before and is not disturbed
  CHECK(server.stop() == 0);
}
