// Tests of the out-of-band connection manager over tcp: listen addresses,
// NAME@HOST[:PORT], a node answering at an address under another name, and
// garbage and forged frames arriving over tcp. The death of a peer of another
// host: test_oob_remote_death.cpp. The multi-process scheme and the helpers:
// oob_test_support.hpp.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <future>
#include <string>

#include "clan_emul/error_detail.hpp"
#include "clan_emul/oob_manager.hpp"
#include "clan_emul/oob_wire.hpp"
#include "oob_test_support.hpp"

using namespace clan;
using namespace clan::oob_test;
using namespace std::chrono_literals;

namespace {

// A tcp port of 127.0.0.1 nothing listens on (bound, then closed).
uint16_t unused_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  uint16_t port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  if (fd >= 0) ::close(fd);
  return port;
}

// The words of the failure `code` on this thread contain `words`.
bool says(Errc code, const std::string& words) { return error_message(code).find(words) != std::string::npos; }

OobBootId our_boot_id() {
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::string text;
  std::getline(f, text);
  OobBootId id{};
  std::size_t out = 0;
  for (std::size_t i = 0; i + 1 < text.size() && out < id.size(); ++i) {
    if (text[i] == '-') continue;
    id[out++] = static_cast<uint8_t>(std::stoi(text.substr(i, 2), nullptr, 16));
    ++i;
  }
  return id;
}

// A child node `name` in runtime directory `own`, listening on tcp, that
// tells its port, accepts `n` requests on port 7 from "cli", says "closed"
// once they are closed, and waits for "done".
int tcp_server(Child& self, const TempDir& own, const std::string& name, int n) {
  auto mgr = OobManager::start(tcp_config(own, name));
  CHILD_CHECK(mgr.ok());
  auto l = (*mgr)->listen(7);
  CHILD_CHECK(l.ok());
  self.tell(std::to_string((*mgr)->listen_port()));
  std::vector<std::shared_ptr<OobConnection>> conns;
  for (int i = 0; i < n; ++i) {
    auto req = (*l)->next_request(Deadline::after(20s));
    CHILD_CHECK(req.ok());
    CHILD_CHECK(req->peer_address().rfind("cli@127.0.0.1:", 0) == 0);
    CHILD_CHECK(req->peer_on_this_host());
    std::vector<std::byte> back(req->peer_blob().rbegin(), req->peer_blob().rend());
    auto c = req->accept(std::move(back));
    CHILD_CHECK(c.ok());
    conns.push_back(c.value());
  }
  self.tell("accepted");
  for (auto& c : conns) {
    CHILD_CHECK(c->wait_down(Deadline::after(20s)) == Errc::kOk);
    CHILD_CHECK(c->state() == OobState::kClosed);
  }
  self.tell("closed");
  return self.heard(Deadline::after(60s)) == "done" ? 0 : 1;
}

}  // namespace

TEST_CASE("oob tcp: port 0 picks a free port, bad listen addresses and ports in use are refused in words",
          "[oob]") {
  TempDir dir;
  auto a = OobManager::start(tcp_config(dir, "a"));
  REQUIRE(a.ok());
  const uint16_t port = (*a)->listen_port();
  CHECK(port != 0);
  CHECK((*a)->listen_address() == "127.0.0.1:" + std::to_string(port));

  OobConfig taken = config(dir, "b");
  taken.listen = "127.0.0.1:" + std::to_string(port);
  auto b = OobManager::start(taken);
  REQUIRE(b.error() == Errc::kAddressInUse);
  CHECK(says(Errc::kAddressInUse, taken.listen));
  CHECK_FALSE(dir.has("b.lock"));  // the name is released again

  const std::pair<const char*, const char*> bad[] = {
      {"127.0.0.1:65536", "out of range"},   {"127.0.0.1:http", "not a decimal"},
      {"300.1.1.1:5", "not a dotted IPv4"},  {"::1:5", "in brackets"},
      {"[::1:5", "closing ']'"},            {"[nonsense]:5", "not an IPv6"},
      {"bad_host!:5", "is not a host"},      {"192.0.2.1:0", "not an address of this host"},
      {":5", "host is missing"},
  };
  for (auto [text, words] : bad) {
    OobConfig c = config(dir, "b");
    c.listen = text;
    INFO(text);
    auto m = OobManager::start(c);
    REQUIRE(m.error() == Errc::kInvalidArgument);
    INFO(error_message(Errc::kInvalidArgument));
    CHECK(says(Errc::kInvalidArgument, text));
    CHECK(says(Errc::kInvalidArgument, words));
  }

  // Without a port: 7460, unless something else holds it on this machine.
  OobConfig dflt = config(dir, "c");
  dflt.listen = "127.0.0.1";
  auto c = OobManager::start(dflt);
  if (c.ok()) {
    CHECK((*c)->listen_port() == 7460);
  } else {
    CHECK(c.error() == Errc::kAddressInUse);
    CHECK(says(Errc::kAddressInUse, "7460"));
  }
  // Without a configured address: $CLAN_OOB_LISTEN.
  ::setenv("CLAN_OOB_LISTEN", "127.0.0.1:0", 1);
  auto d = OobManager::start(config(dir, "d"));
  ::unsetenv("CLAN_OOB_LISTEN");
  REQUIRE(d.ok());
  CHECK((*d)->listen_port() != 0);
  OobConfig every = config(dir, "f");  // '*': every interface
  every.listen = "*:0";
  auto f = OobManager::start(every);
  REQUIRE(f.ok());
  CHECK((*f)->listen_address() == "0.0.0.0:" + std::to_string((*f)->listen_port()));
  auto e = OobManager::start(config(dir, "e"));
  REQUIRE(e.ok());
  CHECK((*e)->listen_port() == 0);
  CHECK((*e)->listen_address().empty());
}

TEST_CASE("oob tcp: malformed node addresses are refused with their words", "[oob]") {
  TempDir dir;
  auto m = OobManager::start(tcp_config(dir, "cli"));
  REQUIRE(m.ok());
  const std::string long_host(254, 'a');
  const std::pair<std::string, const char*> bad[] = {
      {"bad name@127.0.0.1:5", "is not 1 to 64 characters"},
      {"@127.0.0.1:5", "is not 1 to 64 characters"},
      {"n@", "host is missing"},
      {"n@127.0.0.1:0", "out of range"},
      {"n@127.0.0.1:65536", "out of range"},
      {"n@127.0.0.1:12x", "not a decimal"},
      {"n@127.0.0.1:", "is empty"},
      {"n@1.2.3:5", "not a dotted IPv4"},
      {"n@1.2.3.4.5:5", "not a dotted IPv4"},
      {"n@::1:5", "in brackets"},
      {"n@[::1:5", "closing ']'"},
      {"n@[::1]x", "only ':PORT'"},
      {"n@[zz]:5", "not an IPv6"},
      {"n@" + long_host + ":5", "is not a host"},
      {"n@-bad.example:5", "is not a host"},
      {"n@a..b:5", "is not a host"},
      {"n@x@y:5", "is not a host"},
  };
  for (auto& [text, words] : bad) {
    INFO(text);
    auto c = (*m)->connect(text, 7, {}, Deadline::after(5s));
    REQUIRE(c.error() == Errc::kInvalidArgument);
    INFO(error_message(Errc::kInvalidArgument));
    CHECK(says(Errc::kInvalidArgument, words));
  }
  // A name that does not resolve ("invalid" is reserved: RFC 6761).
  auto c = (*m)->connect("n@no-such-host.invalid:5", 7, {}, Deadline::after(10s));
  REQUIRE((c.error() == Errc::kInvalidArgument || c.error() == Errc::kSystem));
  CHECK(says(c.error(), "cannot resolve the host 'no-such-host.invalid'"));

  // A node without a tcp address cannot be answered by another host.
  auto local = OobManager::start(config(dir, "local"));
  REQUIRE(local.ok());
  auto r = (*local)->connect("n@127.0.0.1:5", 7, {}, Deadline::after(5s));
  REQUIRE(r.error() == Errc::kInvalidArgument);
  CHECK(says(Errc::kInvalidArgument, "listens on no tcp address"));
}

TEST_CASE("oob tcp: two nodes exchange blobs over tcp and disconnect", "[oob]") {
  TempDir srv_dir;
  Child srv([&](Child& self) { return tcp_server(self, srv_dir, "srv", 1); });
  auto port = srv.hear(Deadline::after(20s));
  REQUIRE(port);
  TempDir dir;  // another runtime directory than the server's: only tcp joins them
  auto m = OobManager::start(tcp_config(dir, "cli"));
  REQUIRE(m.ok());
  const std::string address = "srv@127.0.0.1:" + *port;
  auto c = (*m)->connect(address, 7, pattern(5000, 1), Deadline::after(20s));
  INFO(error_message(c.error()));
  REQUIRE(c.ok());
  auto blob = pattern(5000, 1);
  CHECK((*c)->peer_blob() == std::vector<std::byte>(blob.rbegin(), blob.rend()));
  CHECK((*c)->peer_node() == "srv");
  CHECK((*c)->peer_address() == address);
  CHECK((*c)->peer_pid() == srv.pid());
  CHECK((*c)->peer_on_this_host());
  CHECK((*c)->peer_boot_id() == our_boot_id());
  REQUIRE(srv.hear(Deadline::after(20s)) == "accepted");
  CHECK((*c)->disconnect() == Errc::kOk);
  CHECK(srv.hear(Deadline::after(20s)) == "closed");
  srv.say("done");
  CHECK(srv.wait_exit(Deadline::after(20s)) == 0);
}

TEST_CASE("oob tcp: another node at the address, or none, refuses the connect in words", "[oob]") {
  TempDir srv_dir;
  Child srv([&](Child& self) { return tcp_server(self, srv_dir, "srv", 1); });
  auto port = srv.hear(Deadline::after(20s));
  REQUIRE(port);
  TempDir dir;
  auto m = OobManager::start(tcp_config(dir, "cli"));
  REQUIRE(m.ok());
  auto wrong = (*m)->connect("other@127.0.0.1:" + *port, 7, {}, Deadline::after(20s));
  REQUIRE(wrong.error() == Errc::kRefused);
  INFO(error_message(Errc::kRefused));
  CHECK(says(Errc::kRefused, "the node at 127.0.0.1:" + *port + " is 'srv', not 'other'"));

  const std::string nobody = "srv@127.0.0.1:" + std::to_string(unused_port());
  auto none = (*m)->connect(nobody, 7, {}, Deadline::after(20s));
  REQUIRE(none.error() == Errc::kRefused);
  CHECK(says(Errc::kRefused, "nothing listens at 127.0.0.1:"));

  // The server's only request is the right one.
  auto right = (*m)->connect("srv@127.0.0.1:" + *port, 7, pattern(9, 9), Deadline::after(20s));
  REQUIRE(right.ok());
  REQUIRE(srv.hear(Deadline::after(20s)) == "accepted");
  CHECK((*right)->disconnect() == Errc::kOk);
  CHECK(srv.hear(Deadline::after(20s)) == "closed");
  srv.say("done");
  CHECK(srv.wait_exit(Deadline::after(20s)) == 0);
}

TEST_CASE("oob tcp: garbage and forged frames over tcp are dropped and counted", "[oob]") {
  using namespace oob_wire;
  TempDir dir;
  auto victim = OobManager::start(tcp_config(dir, "victim"));
  REQUIRE(victim.ok());
  auto l = (*victim)->listen(7);
  REQUIRE(l.ok());
  TempDir other;
  auto cli = OobManager::start(tcp_config(other, "cli"));
  REQUIRE(cli.ok());
  const std::string at = "127.0.0.1:" + std::to_string((*victim)->listen_port());
  auto fut = std::async(std::launch::async,
                        [&] { return (*cli)->connect("victim@" + at, 7, {}, Deadline::after(20s)); });
  auto req = (*l)->next_request(Deadline::after(20s));
  REQUIRE(req.ok());
  auto served = req->accept({});
  REQUIRE(served.ok());
  auto mine = fut.get();
  REQUIRE(mine.ok());

  zmq::context_t ctx;
  zmq::socket_t raw(ctx, zmq::socket_type::dealer);
  raw.set(zmq::sockopt::linger, 0);
  raw.connect("tcp://" + at);
  Message valid;
  valid.hdr.type = MsgType::kConnectReq;
  valid.hdr.node = "zzzzzz";
  valid.hdr.instance = 77;
  valid.hdr.pid = 1;
  valid.hdr.reply_port = unused_port();
  valid.src_conn = 5;
  valid.port = 8;  // nobody listens: whatever stays valid is rejected
  valid.dst_node = "victim";
  uint64_t expected_malformed = send_garbage(raw, valid);
  Message no_reply_port = valid;  // valid over ipc, not over tcp: it cannot be answered
  no_reply_port.hdr.reply_port = 0;
  raw.send(zmq::buffer(encode(no_reply_port)), zmq::send_flags::none);
  ++expected_malformed;

  // Forged: frames naming "cli" at its address, without its token.
  Message forged;
  forged.hdr.node = "cli";
  forged.hdr.instance = 0x5eed;
  forged.hdr.pid = 1;
  forged.hdr.reply_port = (*cli)->listen_port();
  forged.hdr.type = MsgType::kHeartbeat;
  raw.send(zmq::buffer(encode(forged)), zmq::send_flags::none);
  forged.hdr.type = MsgType::kDisconnect;
  forged.dst_conn = (*served)->id();
  forged.src_conn = 1;
  raw.send(zmq::buffer(encode(forged)), zmq::send_flags::none);
  forged.hdr.type = MsgType::kConnectReq;  // a new incarnation, while the old one holds a connection
  forged.src_conn = 3;
  forged.port = 7;
  forged.dst_node = "victim";
  raw.send(zmq::buffer(encode(forged)), zmq::send_flags::none);

  // The marker, read after everything sent before it.
  Message marker = valid;
  marker.hdr.node = "raw";
  marker.port = 7;
  marker.blob = pattern(3, 3);
  raw.send(zmq::buffer(encode(marker)), zmq::send_flags::none);
  for (;;) {  // random mutations may have made other valid requests for port 7
    auto r = (*l)->next_request(Deadline::after(20s));
    REQUIRE(r.ok());
    CHECK(r->peer_node() != "cli");
    if (r->peer_node() == "raw") {
      CHECK(r->peer_address() == "raw@127.0.0.1:" + std::to_string(valid.hdr.reply_port));
      CHECK(r->peer_blob() == pattern(3, 3));
      break;
    }
  }
  auto st = (*victim)->stats();
  CHECK(st.malformed_dropped >= expected_malformed);
  CHECK(st.forged_dropped >= 3);
  WARN("malformed dropped " << st.malformed_dropped << ", forged " << st.forged_dropped << ", unknown "
                            << st.unknown_dropped << ", peers " << st.peers);
  CHECK((*served)->state() == OobState::kConnected);
  CHECK((*mine)->state() == OobState::kConnected);
}
