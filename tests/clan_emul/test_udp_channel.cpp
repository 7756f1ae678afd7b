// UdpChannel: libfabric's udp provider as a datagram channel. Frames of
// every size both ways, the size limit, truncated and foreign datagrams from
// a plain UDP socket discarded and counted, bad addresses and peer names
// refused in words, a blocked receive woken by abort and by the peer's close.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "clan_emul/error_detail.hpp"
#include "clan_emul/event_queue.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/wire/udp_channel.hpp"
#include "clan_emul/wire/udp_name.hpp"

using namespace clan;
using namespace clan::wire;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<UdpChannel> open_channel(size_t max_frame = kUdpMaxPayload) {
  UdpOptions o;
  o.max_frame = max_frame;
  o.wait.mode = WaitMode::kBlock;
  auto c = UdpChannel::open(o);
  INFO(error_message(c ? Errc::kOk : c.error()));
  REQUIRE(c.ok());
  return std::move(c.value());
}

// A plain UDP socket on 127.0.0.1 and its name.
struct RawSocket {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  RawSocket() {
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  }
  ~RawSocket() { ::close(fd); }
  const std::byte* name() const { return reinterpret_cast<const std::byte*>(&addr); }
  void send_to(const UdpChannel& c, size_t len, unsigned char fill) {
    std::vector<unsigned char> buf(len, fill);
    REQUIRE(::sendto(fd, buf.data(), len, 0, reinterpret_cast<const sockaddr*>(c.name().data()),
                     static_cast<socklen_t>(c.name().size())) == static_cast<ssize_t>(len));
  }
};

}  // namespace

TEST_CASE("udp channel: frames of every size up to 1472 bytes arrive intact", "[udp]") {
  auto a = open_channel(), b = open_channel();
  REQUIRE(a->connect(b->name().data(), b->name().size()) == Errc::kOk);
  REQUIRE(b->connect(a->name().data(), a->name().size()) == Errc::kOk);
  std::vector<unsigned char> buf(kUdpMaxPayload);
  for (size_t len = 1; len <= kUdpMaxPayload; ++len) {
    for (size_t i = 0; i < len; ++i) buf[i] = static_cast<unsigned char>(len * 7 + i);
    REQUIRE(a->send(buf.data(), len, Deadline::after(5s)) == Errc::kOk);
    auto f = b->receive(Deadline::after(5s));
    REQUIRE(f.ok());
    REQUIRE(f->size == len);
    REQUIRE(std::memcmp(f->data, buf.data(), len) == 0);
    REQUIRE(b->release() == Errc::kOk);
  }
  CHECK(a->send(buf.data(), kUdpMaxPayload + 1, Deadline::now()) == Errc::kInvalidArgument);
  CHECK(b->stats().received == kUdpMaxPayload);
  CHECK(b->stats().truncated == 0);
}

TEST_CASE("udp channel: readable() sees a second frame after the first was taken", "[udp]") {
  auto a = open_channel(), b = open_channel();
  REQUIRE(a->connect(b->name().data(), b->name().size()) == Errc::kOk);
  REQUIRE(b->connect(a->name().data(), a->name().size()) == Errc::kOk);
  CHECK_FALSE(b->readable());
  REQUIRE(a->send("one", 3, Deadline::after(5s)) == Errc::kOk);
  REQUIRE(a->send("two", 3, Deadline::after(5s)) == Errc::kOk);
  auto f = b->receive(Deadline::after(5s));
  REQUIRE(f.ok());
  REQUIRE(b->release() == Errc::kOk);
  CHECK(b->readable());
  CHECK(b->receive(Deadline::after(5s)).ok());
  REQUIRE(b->release() == Errc::kOk);
  CHECK(b->receive(Deadline::now()).error() == Errc::kTimeout);
}

TEST_CASE("udp channel: truncated and foreign datagrams are discarded and counted", "[udp][hostile]") {
  auto c = open_channel(1000);
  RawSocket peer, stranger;
  REQUIRE(c->connect(peer.name(), sizeof peer.addr) == Errc::kOk);
  peer.send_to(*c, 1001, 0xaa);    // one byte beyond the frame: cut by the provider
  peer.send_to(*c, 1472, 0xbb);    // the largest UDP payload, cut too
  stranger.send_to(*c, 10, 0xcc);  // not from the peer
  peer.send_to(*c, 1000, 0xdd);    // the largest frame: fine
  auto f = c->receive(Deadline::after(5s));
  REQUIRE(f.ok());
  CHECK(f->size == 1000);
  CHECK(f->data[0] == std::byte{0xdd});
  REQUIRE(c->release() == Errc::kOk);
  const UdpChannelStats s = c->stats();
  CHECK(s.received == 4);
  CHECK(s.truncated == 2);
  CHECK(s.foreign == 1);
  CHECK(s.errors == 0);
}

TEST_CASE("udp channel: bad addresses and peer names are refused in words", "[udp][hostile]") {
  UdpOptions o;
  o.address = "not-an-address";
  auto bad = UdpChannel::open(o);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error() == Errc::kInvalidArgument);
  CHECK(error_message(bad.error()).find("not-an-address") != std::string::npos);
  o.address = "0.0.0.0";
  CHECK(UdpChannel::open(o).error() == Errc::kInvalidArgument);
  o.address = "127.0.0.1";
  o.max_frame = kUdpMaxPayload + 1;
  CHECK(UdpChannel::open(o).error() == Errc::kInvalidArgument);
  CHECK(error_message(Errc::kInvalidArgument).find("1472") != std::string::npos);

  o.max_frame = kUdpMaxPayload;
  o.address = "198.51.100.7";  // no interface of this host has it
  auto elsewhere = UdpChannel::open(o);
  REQUIRE_FALSE(elsewhere.ok());
  CHECK(error_message(elsewhere.error()).find("198.51.100.7") != std::string::npos);

  auto c = open_channel();
  std::vector<std::byte> name = c->name();
  CHECK(c->connect(name.data(), 3) == Errc::kCorrupt);
  sockaddr_in zero_port{};
  zero_port.sin_family = AF_INET;
  zero_port.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK(c->connect(reinterpret_cast<std::byte*>(&zero_port), sizeof zero_port) == Errc::kCorrupt);
  CHECK(error_message(Errc::kCorrupt).find("port 0") != std::string::npos);
  sockaddr_in6 v6{};
  v6.sin6_family = AF_INET6;
  v6.sin6_port = htons(9);
  v6.sin6_addr = in6addr_loopback;
  CHECK(c->connect(reinterpret_cast<std::byte*>(&v6), sizeof v6) == Errc::kCorrupt);
  CHECK(error_message(Errc::kCorrupt).find("family") != std::string::npos);
}

TEST_CASE("udp channel: abort and the peer's close wake a blocked receive", "[udp]") {
  auto c = open_channel();
  RawSocket peer;
  REQUIRE(c->connect(peer.name(), sizeof peer.addr) == Errc::kOk);
  Errc got = Errc::kOk;
  std::thread t([&] { got = c->receive(Deadline::after(20s)).error(); });
  c->abort_receive(Errc::kPeerDead);
  t.join();
  CHECK(got == Errc::kPeerDead);

  auto d = open_channel();
  REQUIRE(d->connect(peer.name(), sizeof peer.addr) == Errc::kOk);
  peer.send_to(*d, 5, 1);
  d->peer_closed();
  // What arrived before the close is drained first.
  auto f = d->receive(Deadline::after(5s));
  REQUIRE(f.ok());
  REQUIRE(d->release() == Errc::kOk);
  std::thread t2([&] { got = d->receive(Deadline::after(20s)).error(); });
  t2.join();
  CHECK(got == Errc::kClosed);
}

TEST_CASE("udp channel: a directed event queue hears of arrivals once per drained channel", "[udp]") {
  auto nic = std::move(Nic::open({}).value());
  auto queue = nic->create_event_queue();
  REQUIRE(queue.ok());
  auto source = queue->add_source(5);
  REQUIRE(source.ok());
  auto a = open_channel(), b = open_channel();
  REQUIRE(a->connect(b->name().data(), b->name().size()) == Errc::kOk);
  REQUIRE(b->connect(a->name().data(), a->name().size()) == Errc::kOk);
  REQUIRE(b->notify_to(&queue.value(), source.value()) == Errc::kOk);
  CHECK_FALSE(b->readable());
  for (int round = 1; round <= 20; ++round) {
    CAPTURE(round);
    REQUIRE(a->send("one", 3, Deadline::after(5s)) == Errc::kOk);
    auto ev = queue->wait(Deadline::after(10s));
    REQUIRE(ev.ok());
    CHECK(ev->user == 5);
    // A second arrival while the first is unread: the reader drains both.
    REQUIRE(a->send("two", 3, Deadline::after(5s)) == Errc::kOk);
    for (int i = 0; i < 2; ++i) {
      REQUIRE(b->receive(Deadline::after(5s)).ok());
      REQUIRE(b->release() == Errc::kOk);
    }
    CHECK_FALSE(b->readable());  // run dry: re-arms
    while (queue->poll()) {
    }
    // One event per round, and at most one more for the second arrival:
    // the fd staying readable while unread does not make the thread post
    // over and over.
    CHECK(b->stats().events <= static_cast<uint64_t>(2 * round));
  }
  b->notify_to(nullptr, 0);
}

TEST_CASE("udp channel: IPv6 works as IPv4 does", "[udp]") {
  UdpOptions o;
  o.address = "::1";
  auto a = UdpChannel::open(o), b = UdpChannel::open(o);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(udp_name_text((*a)->name().data(), (*a)->name().size()).rfind("[::1]:", 0) == 0);
  REQUIRE((*a)->connect((*b)->name().data(), (*b)->name().size()) == Errc::kOk);
  REQUIRE((*b)->connect((*a)->name().data(), (*a)->name().size()) == Errc::kOk);
  REQUIRE((*a)->send("six", 3, Deadline::after(5s)) == Errc::kOk);
  auto f = (*b)->receive(Deadline::after(5s));
  REQUIRE(f.ok());
  CHECK(std::string(reinterpret_cast<const char*>(f->data), f->size) == "six");
  REQUIRE((*b)->release() == Errc::kOk);
}
