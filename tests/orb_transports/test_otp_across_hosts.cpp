// giop:otp across hosts, without an ORB: the link both ends derive from the
// options (shared memory on this host, udp to another, the same window and
// fault model either way); otp's addresses and components of another host
// (NAME@HOST:PORT, the reach in its IOR component); and a plugin client and endpoint of one process that meet over
// udp when the client names the node at its address for other hosts.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "clan_emul/datagram_link.hpp"
#include "orb_transports/common/component_usability.hpp"
#include "orb_transports/common/fabric.hpp"
#include "orb_transports/common/ior_component.hpp"
#include "orb_transports/otp/otp_address.hpp"
#include "orb_transports/otp/otp_connection.hpp"
#include "orb_transports/otp/otp_endpoint.hpp"
#include "orb_transports/otp/otp_link_config.hpp"
#include "orb_transports/plugin_pair.hpp"

using namespace clanorb;
using namespace std::chrono_literals;
using plugin_test::after;

namespace {

// A component of a server on another host that publishes `reach`.
IorComponent elsewhere(const std::string& address, const std::string& reach) {
  return IorComponent{"00000000-0000-4000-8000-000000000000", address, "/tmp/clanorb-0", reach};
}

// The options a test sets, put back afterwards (the process's options are
// global and read at each connect).
struct OptionsGuard {
  FabricOptions saved = fabric_options();
  ~OptionsGuard() { fabric_options() = saved; }
};

}  // namespace

TEST_CASE("otp link config: on this host shared memory with 9 KiB frames, a ring that holds the window",
          "[otp_hosts]") {
  OptionsGuard guard;
  fabric_options().otp_window = 24;
  const clan::DatagramLink::Config c = otp_link_config(false);
  CHECK(c.channel == clan::DatagramChannel::kSharedMemory);
  CHECK(c.mtu == clan::DatagramConfig{}.mtu);
  CHECK(c.window == 24);
  CHECK(c.ring_bytes >= clan::DatagramLink::ring_bytes_needed(c));
}

TEST_CASE("otp link config: across hosts udp at -ORBclanHost, frames of one UDP datagram, the same window",
          "[otp_hosts]") {
  OptionsGuard guard;
  fabric_options().host = "10.1.2.3";
  fabric_options().otp_window = 24;
  const clan::DatagramLink::Config c = otp_link_config(true);
  CHECK(c.channel == clan::DatagramChannel::kUdp);
  CHECK(c.mtu == clan::DatagramLink::kMaxUdpMtu);
  CHECK(c.window == 24);
  CHECK(c.udp_address == "10.1.2.3");
  CHECK(c.udp_port == 0);
  CHECK(c.ring_bytes >= clan::DatagramLink::ring_bytes_needed(c));
  // Both ends derive it alike: the handshake compares mtu, ring and window.
  const clan::DatagramLink::Config again = otp_link_config(true);
  CHECK(again.mtu == c.mtu);
  CHECK(again.ring_bytes == c.ring_bytes);
  CHECK(again.window == c.window);
}

TEST_CASE("otp link config: the seeded fault model applies over either channel", "[otp_hosts]") {
  OptionsGuard guard;
  fabric_options().host = "127.0.0.1";
  fabric_options().otp_loss_ppm = 20000;
  fabric_options().otp_corrupt_ppm = 3000;
  fabric_options().otp_seed = 77;
  for (bool across : {false, true}) {
    INFO("across hosts: " << across);
    const clan::DatagramLink::Config c = otp_link_config(across);
    CHECK(c.faults.drop_rate == Approx(0.02));
    CHECK(c.faults.corrupt_rate == Approx(0.003));
    CHECK(c.faults.seed == 77);
  }
}

TEST_CASE("otp link config: the udp channel binds a numeric address of -ORBclanHost", "[otp_hosts]") {
  CHECK(udp_bind_address("10.77.1.2") == "10.77.1.2");
  CHECK(udp_bind_address("localhost") == "127.0.0.1");
  CHECK(udp_bind_address("") == "");
  CHECK(udp_bind_address("no-such-host.invalid") == "");
}

TEST_CASE("otp crosses hosts", "[otp_hosts]") {
  CHECK(tag_crosses_hosts(kOtpIorTag));
  CHECK(scheme_crosses_hosts("giop:otp"));
  CHECK(!scheme_crosses_hosts("giop:tcp"));
}

TEST_CASE("otp addresses take a node of another host (NAME@HOST:PORT)", "[otp_hosts]") {
  std::unique_ptr<omni::giopAddress> a(omni::giopAddress::str2Address("giop:otp:orb12@10.77.1.2:7460:3"));
  REQUIRE(a);
  CHECK(std::strcmp(a->address(), "giop:otp:orb12@10.77.1.2:7460:3") == 0);
  std::unique_ptr<omni::giopAddress> local(omni::giopAddress::str2Address("giop:otp:orb12:3"));
  CHECK(local);
}

TEST_CASE("otp: a component of another host is reached at NODE@REACH when this process has -ORBclanHost",
          "[otp_hosts]") {
  OptionsGuard guard;
  const IorComponent c = elsewhere("giop:otp:orb42:5", "10.77.1.2:40000");
  fabric_options().host = "10.77.1.1";
  CHECK(why_not_across_hosts(c).empty());
  CHECK(why_unusable_here(c, true).empty());
  CHECK(address_from_here(c) == "giop:otp:orb42@10.77.1.2:40000:5");

  fabric_options().host.clear();
  CHECK(why_not_across_hosts(c).find("this process has no -ORBclanHost") != std::string::npos);
  CHECK(why_not_across_hosts(elsewhere("giop:otp:orb42:5", "")).find("publishes no address for other hosts") !=
        std::string::npos);
}

TEST_CASE("otp: a client without -ORBclanHost does not connect to a node of another host", "[otp_hosts]") {
  OptionsGuard guard;
  fabric_options().host.clear();
  OtpAddress a("orb42@127.0.0.1:1", 5);
  CORBA::Boolean timed_out = 1;
  CHECK(a.Connect(after(5s), 0, timed_out) == nullptr);
  CHECK(!timed_out);
}

// The endpoint of this process listens for other hosts on 127.0.0.1; its
// client names the node there, as one of another host would, and both ends
// take the udp channel: a request and its reply cross it, under loss.
TEST_CASE("otp: a client naming the node at its address for other hosts meets the endpoint over udp",
          "[otp_hosts]") {
  OptionsGuard guard;
  fabric_options().host = "127.0.0.1";
  fabric_options().otp_loss_ppm = 50000;  // repaired by omniTransport, as on one host
  fabric_options().otp_seed = 5;
  Fabric::release();  // one started by an earlier test case of this process has no -ORBclanHost
  plugin_test::Server<OtpEndpoint> server;
  auto fabric = Fabric::get("giop:otp");
  REQUIRE(fabric);
  const std::string reach = fabric->reach();
  REQUIRE(!reach.empty());
  // "giop:otp:NODE:PORT" -> NODE@REACH, PORT
  const std::string bound = server.ep->address();
  const size_t port_at = bound.rfind(':');
  const std::string node = bound.substr(std::strlen("giop:otp:"), port_at - std::strlen("giop:otp:"));
  const auto port = static_cast<uint16_t>(std::stoul(bound.substr(port_at + 1)));
  OtpAddress address(node + "@" + reach, port);
  CORBA::Boolean timed_out = 0;
  omni::giopActiveConnection* active = address.Connect(after(10s), 0, timed_out);
  REQUIRE(active);
  omni::giopConnection& client = active->getConnection();
  omni::giopConnection* conn = server.next_accepted();
  REQUIRE(conn);

  // A GIOP 1.2 request (little-endian, response expected) larger than a
  // datagram, and a reply: both fragment into the udp link's mtu. The
  // server side runs on a thread of its own, as omniORB's would, so that
  // its link is read while the client sends. Each side sends from a buffer
  // of its own: a connection writes packet headers into a chunk that starts
  // with a GIOP header (omniORB's buffer) while it sends it.
  auto giop = [](uint8_t type, size_t body) {
    std::string m = {'G', 'I', 'O', 'P', 1, 2, 1, static_cast<char>(type)};
    for (int i = 0; i < 4; ++i) m.push_back(static_cast<char>((body >> (8 * i)) & 0xff));
    m += std::string("\x01\x00\x00\x00\x03", 5) + std::string(body - 5, 'r');
    return m;
  };
  auto recv_all = [](omni::giopConnection& c, std::string& into) {
    for (size_t n = 0; n < into.size();) {
      const int r = c.Recv(into.data() + n, into.size() - n, after(10s));
      if (r <= 0) return false;
      n += static_cast<size_t>(r);
    }
    return true;
  };
  const std::string request = giop(0, 20000), reply = giop(1, 6000);
  std::atomic<int> intact{0};
  std::thread serve([&] {
    std::string got(request.size(), '\0'), out = reply;
    while (recv_all(*conn, got)) {
      if (got == request) ++intact;
      if (conn->Send(out.data(), out.size(), after(10s)) != (int)out.size()) break;
    }
  });
  int replies = 0;
  std::string out = request;
  for (int call = 0; call < 20; ++call) {
    if (client.Send(out.data(), out.size(), after(10s)) != (int)out.size()) break;
    std::string back(reply.size(), '\0');
    if (!recv_all(client, back)) break;
    if (back == reply) ++replies;
  }
  // The client's last acknowledgement: the server's next Recv sees the close.
  client.Shutdown();
  serve.join();
  CHECK(replies == 20);
  CHECK(intact == 20);
  // The fault model ran over udp: the protocol repaired losses.
  auto* server_side = dynamic_cast<OtpConnection*>(conn);
  auto* client_side = dynamic_cast<OtpConnection*>(&client);
  REQUIRE(server_side);
  REQUIRE(client_side);
  CHECK(server_side->protocol_stats().timeouts + client_side->protocol_stats().timeouts > 0);
  conn->Shutdown();
  conn->decrRefCount(1);
  client.decrRefCount(1);
}
