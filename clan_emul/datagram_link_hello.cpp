// The handshake blob of a DatagramLink (datagram_link.hpp), carried by the
// out-of-band connection manager: each side's geometry and window, and where
// its frames go. Over shared memory: the ring it receives into and the word
// its sender takes read pointers in (RDMA cookies). Over udp: its endpoint's
// name. Every field is checked: a malformed blob is kCorrupt, a well-formed
// one we cannot talk to (another channel, geometry or window) kInvalidArgument.
#include <cstring>

#include "clan_emul/datagram_link.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/oob_listener.hpp"
#include "clan_emul/wire/udp_channel.hpp"

namespace clan {

namespace {

struct Geometry {
  uint32_t magic;
  uint32_t version;
  uint64_t mtu;
  uint64_t ring_bytes;
  uint64_t window;
};

struct Hello {  // shared memory
  Geometry g;
  RdmaCookie ring;
  RdmaCookie read_pointer;
};
static_assert(sizeof(Hello) == 128);  // the tests forge one of this size

struct UdpHello {
  Geometry g;
  uint32_t name_len;
  uint32_t zero;
  std::byte name[wire::kUdpMaxName];
  std::byte pad[4];  // zero
};
static_assert(sizeof(UdpHello) == 72);

constexpr uint32_t kHelloMagic = 0x444c4e4b;     // "DLNK"
constexpr uint32_t kUdpHelloMagic = 0x554c4e4b;  // "DLNU"
constexpr uint32_t kHelloVersion = 1;

template <class T>
std::vector<std::byte> blob_of(const T& t) {
  std::vector<std::byte> blob(sizeof t);
  std::memcpy(blob.data(), &t, sizeof t);
  return blob;
}

// The channel a blob's size and magic say it is for; false if neither.
bool channel_of(const std::vector<std::byte>& blob, DatagramChannel* channel) {
  uint32_t magic = 0;
  if (blob.size() >= sizeof magic) std::memcpy(&magic, blob.data(), sizeof magic);
  if (blob.size() == sizeof(Hello) && magic == kHelloMagic) {
    *channel = DatagramChannel::kSharedMemory;
  } else if (blob.size() == sizeof(UdpHello) && magic == kUdpHelloMagic) {
    *channel = DatagramChannel::kUdp;
  } else {
    return false;
  }
  return true;
}

}  // namespace

DatagramChannel DatagramLink::requested_channel(const OobRequest& request) {
  DatagramChannel channel;
  return channel_of(request.peer_blob(), &channel) ? channel : DatagramChannel::kSharedMemory;
}

std::vector<std::byte> DatagramLink::hello() const {
  const bool udp = config_.channel == DatagramChannel::kUdp;
  const Geometry g{udp ? kUdpHelloMagic : kHelloMagic, kHelloVersion, config_.mtu,
                   config_.ring_bytes, config_.window};
  if (!udp) return blob_of(Hello{g, rx_->cookie(), tx_->cookie()});
  UdpHello h{};
  h.g = g;
  h.name_len = static_cast<uint32_t>(udp_->name().size());
  std::memcpy(h.name, udp_->name().data(), udp_->name().size());
  return blob_of(h);
}

Errc DatagramLink::attach(const std::vector<std::byte>& peer_hello) {
  DatagramChannel channel;
  if (!channel_of(peer_hello, &channel)) {
    return set_error(Errc::kCorrupt, 0, "datagram link: a hello of %zu bytes that is no hello",
                     peer_hello.size());
  }
  Geometry g;
  std::memcpy(&g, peer_hello.data(), sizeof g);
  DatagramConfig peer = config_;
  peer.mtu = g.mtu;
  peer.ring_bytes = g.ring_bytes;
  if (g.version != kHelloVersion || !dgram::valid(peer) || g.mtu <= kLinkHeader) {
    return set_error(Errc::kCorrupt, 0, "datagram link: a hello of version %u, mtu %llu",
                     g.version, static_cast<unsigned long long>(g.mtu));
  }
  // Well formed, but not what we can talk to: both ends size their rings
  // (buffers) alike and use one channel.
  if (channel != config_.channel || g.mtu != config_.mtu || g.ring_bytes != config_.ring_bytes ||
      g.window != config_.window) {
    return set_error(Errc::kInvalidArgument, 0,
                     "datagram link: the peer offers %s, mtu %llu, window %llu; we %s, mtu %zu, "
                     "window %zu",
                     to_string(channel), static_cast<unsigned long long>(g.mtu),
                     static_cast<unsigned long long>(g.window), to_string(config_.channel),
                     config_.mtu, config_.window);
  }
  if (channel == DatagramChannel::kUdp) return attach_udp(peer_hello);
  Hello h;
  std::memcpy(&h, peer_hello.data(), sizeof h);
  if (Errc e = tx_->attach(h.ring); e != Errc::kOk) return e;
  return rx_->attach(h.read_pointer);
}

Errc DatagramLink::attach_udp(const std::vector<std::byte>& peer_hello) {
  UdpHello h;
  std::memcpy(&h, peer_hello.data(), sizeof h);  // read once, then checked
  static constexpr std::byte kZeroPad[sizeof h.pad] = {};
  if (h.name_len > sizeof h.name || h.zero != 0 || std::memcmp(h.pad, kZeroPad, sizeof h.pad)) {
    return set_error(Errc::kCorrupt, 0, "datagram link over udp: a peer name of %u bytes",
                     h.name_len);
  }
  if (Errc e = udp_->connect(h.name, h.name_len); e != Errc::kOk) {
    return append_error_context(e, "datagram link over udp");
  }
  return Errc::kOk;
}

}  // namespace clan
