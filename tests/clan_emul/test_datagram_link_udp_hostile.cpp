// DatagramLink over udp against a hostile peer: a plain UDP socket that
// completes the handshake with a forged hello and then sends crafted frames.
// Late (reordered), truncated, corrupt, malformed and foreign frames are
// discarded and counted; the good ones around them arrive, and the link
// still sends. Malformed udp hellos are refused with kCorrupt.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "clan_emul/crc32.hpp"
#include "clan_emul/datagram_layout.hpp"
#include "clan_emul/datagram_link_frame.hpp"
#include "udp_link_pair.hpp"

using namespace clan;
using namespace std::chrono_literals;
using test::oob_config;
using test::RuntimeDir;
using test::udp_link_config;

namespace {

struct UdpHello {  // as the link sends it (datagram_link_hello.cpp)
  uint32_t magic, version;
  uint64_t mtu, ring_bytes, window;
  uint32_t name_len, zero;
  std::byte name[28];
  std::byte pad[4];
};
static_assert(sizeof(UdpHello) == 72);
constexpr uint32_t kUdpHelloMagic = 0x554c4e4b;

// Made in the hostile peers' host (test::in_peer_netns).
struct Socket {
  int fd = test::in_peer_netns([] { return ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0); });
  sockaddr_in addr{};
  Socket() {
    addr.sin_family = AF_INET;
    REQUIRE(::inet_pton(AF_INET, test::test_peer_host().c_str(), &addr.sin_addr) == 1);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  }
  ~Socket() { ::close(fd); }
};

UdpHello hello_for(const DatagramLinkConfig& c, const Socket& s) {
  UdpHello h{};
  h.magic = kUdpHelloMagic;
  h.version = 1;
  h.mtu = c.mtu;
  h.ring_bytes = c.ring_bytes;
  h.window = c.window;
  h.name_len = sizeof s.addr;
  std::memcpy(h.name, &s.addr, sizeof s.addr);
  return h;
}

std::vector<std::byte> blob_of(const UdpHello& h) {
  std::vector<std::byte> b(sizeof h);
  std::memcpy(b.data(), &h, sizeof h);
  return b;
}

// A link accepted from a peer whose hello is `hello`: the link, or why not.
struct ForgedPeer {
  RuntimeDir dir;
  std::unique_ptr<Nic> nic = std::move(Nic::open({}).value());
  std::unique_ptr<OobManager> mgr_raw = std::move(OobManager::start(oob_config(dir, "raw")).value());
  std::unique_ptr<OobManager> mgr_link = std::move(OobManager::start(oob_config(dir, "link")).value());
  std::unique_ptr<OobListener> listener = std::move(mgr_link->listen(7).value());
  std::shared_ptr<OobConnection> conn;
  std::unique_ptr<DatagramLink> link;
  Errc accept_error = Errc::kOk;
  sockaddr_in link_addr{};

  ForgedPeer(const DatagramLinkConfig& c, const std::vector<std::byte>& hello) {
    std::thread t([&] {
      auto r = mgr_raw->connect("link", 7, hello, Deadline::after(20s));
      if (r) conn = std::move(r.value());
    });
    auto req = listener->next_request(Deadline::after(20s));
    REQUIRE(req.ok());
    auto l = DatagramLink::accept(*nic, *req, c);
    if (l) link = std::move(l.value()); else accept_error = l.error();
    t.join();
    if (!conn || !link) return;
    UdpHello theirs;
    REQUIRE(conn->peer_blob().size() == sizeof theirs);
    std::memcpy(&theirs, conn->peer_blob().data(), sizeof theirs);
    REQUIRE(theirs.name_len == sizeof link_addr);
    std::memcpy(&link_addr, theirs.name, sizeof link_addr);
  }

  // Sends raw bytes from `s` to the link.
  void send_raw(const Socket& s, const std::vector<std::byte>& bytes) const {
    REQUIRE(::sendto(s.fd, bytes.data(), bytes.size(), 0,
                     reinterpret_cast<const sockaddr*>(&link_addr), sizeof link_addr) ==
            static_cast<ssize_t>(bytes.size()));
  }
};

// A well-formed data frame: channel header, link header, payload.
std::vector<std::byte> data_frame(uint64_t seq, const std::string& payload) {
  const datagram_link_detail::LinkHeader h{datagram_link_detail::kData, 0, seq};
  std::vector<std::byte> f(dgram::kFrameHeader + sizeof h + payload.size());
  dgram::encode_frame(f.data(), seq, &h, sizeof h, payload.data(), payload.size());
  return f;
}

}  // namespace

TEST_CASE("datagram link over udp: late, truncated, corrupt, malformed and foreign frames are "
          "discarded and counted",
          "[datagram_link][udp][hostile]") {
  const DatagramLinkConfig c = udp_link_config(8);
  Socket peer, stranger;
  ForgedPeer p(c, blob_of(hello_for(c, peer)));
  REQUIRE(p.link);
  p.send_raw(peer, data_frame(0, "zero"));
  p.send_raw(peer, data_frame(2, "two"));  // 1 is missing: a gap
  p.send_raw(peer, data_frame(1, "one"));  // late: reordered, discarded
  p.send_raw(peer, std::vector<std::byte>(2000, std::byte{0x11}));  // beyond one frame: cut
  std::vector<std::byte> corrupt = data_frame(3, "bad crc");
  corrupt.back() ^= std::byte{1};
  p.send_raw(peer, corrupt);
  std::vector<std::byte> malformed = data_frame(3, "length");
  const uint32_t wrong = 2;  // the length field disagrees with the size, under a good CRC
  std::memcpy(malformed.data() + dgram::kLength, &wrong, 4);
  const uint32_t crc = dgram::frame_crc(malformed.data(), malformed.data() + dgram::kFrameHeader,
                                        malformed.size() - dgram::kFrameHeader);
  std::memcpy(malformed.data() + dgram::kCrc, &crc, 4);
  p.send_raw(peer, malformed);
  p.send_raw(stranger, data_frame(3, "stranger"));  // not from the peer's address
  p.send_raw(peer, data_frame(3, "three"));

  std::vector<char> buf(p.link->mtu());
  for (auto [want_seq, want] : {std::pair<uint64_t, std::string>{0, "zero"}, {2, "two"},
                                {3, "three"}}) {
    uint64_t seq = 0;
    auto got = p.link->receive(buf.data(), buf.size(), Deadline::after(5s), &seq);
    REQUIRE(got.ok());
    CHECK(seq == want_seq);
    CHECK(std::string(buf.data(), got.value()) == want);
  }
  const DatagramLinkStats s = p.link->stats();
  CHECK(s.reordered == 1);
  CHECK(s.data_lost == 1);
  CHECK(s.receiver.truncated == 1);
  CHECK(s.receiver.discarded_corrupt == 1);
  CHECK(s.receiver.discarded_malformed == 1);
  CHECK(s.receiver.foreign == 1);
  CHECK(s.data_received == 3);

  // Nothing else broke: the link still sends, and its frame checks out.
  REQUIRE(p.link->send("back", 4, Deadline::after(5s)) == Errc::kOk);
  std::vector<std::byte> frame(2048);
  ssize_t n;
  uint64_t seq = ~uint64_t{0};
  datagram_link_detail::LinkHeader h{};
  do {  // skip the link's credit acks
    n = ::recv(peer.fd, frame.data(), frame.size(), 0);
    REQUIRE(n > 0);
    REQUIRE(dgram::check_frame(frame.data(), static_cast<size_t>(n), c.mtu, &seq) ==
            dgram::FrameCheck::kOk);
    std::memcpy(&h, frame.data() + dgram::kFrameHeader, sizeof h);
  } while (h.type != datagram_link_detail::kData);
  CHECK(h.value == 0);
  CHECK(static_cast<size_t>(n) == dgram::kFrameHeader + sizeof h + 4);
  CHECK(std::memcmp(frame.data() + dgram::kFrameHeader + sizeof h, "back", 4) == 0);
}

TEST_CASE("datagram link over udp: a malformed hello is rejected with kCorrupt",
          "[datagram_link][udp][hostile]") {
  const DatagramLinkConfig c = udp_link_config(4);
  Socket s;
  std::vector<std::vector<std::byte>> forged;
  UdpHello long_name = hello_for(c, s);
  long_name.name_len = 29;  // more than the name field holds
  UdpHello odd_name = hello_for(c, s);
  odd_name.name_len = 12;  // no sockaddr is 12 bytes
  UdpHello port0 = hello_for(c, s);
  std::memset(port0.name + 2, 0, 2);
  UdpHello padded = hello_for(c, s);
  padded.pad[3] = std::byte{1};
  for (const UdpHello& h : {long_name, odd_name, port0, padded}) forged.push_back(blob_of(h));
  forged.push_back(std::vector<std::byte>(71, std::byte{0x55}));  // wrong size
  for (const auto& blob : forged) {
    ForgedPeer p(c, blob);
    CHECK(p.accept_error == Errc::kCorrupt);
    CHECK_FALSE(p.conn);
  }
}
