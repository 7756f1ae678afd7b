// Object references leaving the process: as a string read by another process,
// and through a naming service (omniNames, started by the test on its own
// port and log directory).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <omniORB4/Naming.hh>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "orb/generate.hpp"
#include "orb/orb_fixture.hpp"

using namespace clan::orbtest;

namespace {

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_port() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = -1;
  if (bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(s);
  return port;
}

// omniNames in a child process with its own log directory; killed at the end.
class NamingService {
 public:
  NamingService() {
    // The port may be taken between free_port() and omniNames' bind: retry.
    for (int attempt = 0; attempt < 3 && !proc_; ++attempt) {
      port_ = free_port();
      // A fresh log directory each attempt: -start refuses an existing data file.
      std::string logdir = dir_.path() + "/" + std::to_string(attempt);
      std::filesystem::create_directory(logdir);
      auto p = std::make_unique<Process>(
          "/usr/bin/omniNames",
          std::vector<std::string>{"-start", std::to_string(port_), "-logdir", logdir},
          /*merge_stderr=*/true);
      // It prints its root context once its endpoint is bound (and listening).
      if (p->wait_for_line("Root context is", std::chrono::seconds(10), /*anywhere=*/true))
        proc_ = std::move(p);
    }
    REQUIRE(proc_);
  }
  ~NamingService() {
    if (proc_) proc_->kill_now();
  }
  std::string corbaloc() const {
    return "corbaloc:iiop:127.0.0.1:" + std::to_string(port_) + "/NameService";
  }

 private:
  TempDir dir_;
  int port_ = -1;
  std::unique_ptr<Process> proc_;
};

}  // namespace

TEST_CASE("IOR round trip: a stringified reference works in another process", "[orb]") {
  ORB_TEST_OVER_EVERY_TRANSPORT();
  Server server(t, mode);

  // The server's object_to_string, read by another process's string_to_object.
  auto first = start_client({"--ior", server.echo_ior(), "--calls", "5", "--tag", "str"});
  CHECK(first->wait() == kClientOk);

  // Through this process and back to a string: the reference must survive
  // unmarshalling and re-marshalling (the transport's IOR hooks included).
  echo_var e = server.echo();
  REQUIRE(!CORBA::is_nil(e));
  CORBA::String_var again = client_orb()->object_to_string(e);
  auto second = start_client({"--ior", again.in(), "--calls", "5", "--tag", "restr"});
  CHECK(second->wait() == kClientOk);

  CHECK(server.stop() == 0);
}

TEST_CASE("IOR round trip through omniNames: bound here, resolved and called by another process",
          "[orb]") {
  ORB_TEST_OVER_EVERY_TRANSPORT();
  NamingService ns;
  Server server(t, mode);
  echo_var e = server.echo();
  REQUIRE(!CORBA::is_nil(e));

  CORBA::Object_var nsobj = client_orb()->string_to_object(ns.corbaloc().c_str());
  CosNaming::NamingContext_var nc = CosNaming::NamingContext::_narrow(nsobj);
  REQUIRE(!CORBA::is_nil(nc));
  const std::string name = "echo." + t.name;
  CosNaming::Name n;
  n.length(1);
  n[0].id = name.c_str();
  n[0].kind = "";
  nc->rebind(n, e);

  auto client = start_client({"--ns", ns.corbaloc(), "--name", name, "--calls", "5", "--tag", "ns"});
  CHECK(client->wait() == kClientOk);

  // The reference omniNames hands back is the server's, usable here too.
  CORBA::Object_var back = nc->resolve(n);
  echo_var e2 = echo::_narrow(back);
  REQUIRE(!CORBA::is_nil(e2));
  CORBA::String_var r = e2->echoString("via the naming service");
  CHECK(std::string(r.in()) == "via the naming service");

  CHECK(server.stop() == 0);
}
