// What a DatagramLink's frames travel over (datagram_link.hpp): the config
// checked for the chosen channel, and the sender and receiver opened over a
// DMQ each way (one host) or over one udp channel both ways (any host).
#include <algorithm>

#include "clan_emul/datagram_link.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/wire/udp_channel.hpp"

namespace clan {

static_assert(DatagramLink::kMaxUdpMtu + dgram::kFrameHeader == wire::kUdpMaxPayload);

namespace {

// DMQ bytes one channel frame with `payload` link bytes takes in the ring.
constexpr size_t ring_frame(size_t payload) {
  return dmq::kHeader + dmq::align8(dgram::kFrameHeader + payload);
}

}  // namespace

size_t DatagramLink::ring_bytes_needed(const Config& c) {
  if (c.window == 0) return 0;
  return c.window * ring_frame(c.mtu) + kControlReserve * ring_frame(kLinkHeader);
}

Errc DatagramLink::check_config(const Config& c) {
  if (!dgram::valid(c) || c.mtu <= kLinkHeader || c.ack_every > c.window ||
      c.probe_after.count() <= 0 || c.probe_max < c.probe_after) {
    return set_error(Errc::kInvalidArgument, 0, "datagram link: invalid configuration");
  }
  if (c.channel == DatagramChannel::kUdp) {
    if (c.mtu > kMaxUdpMtu) {
      return set_error(Errc::kInvalidArgument, 0,
                       "datagram link over udp: an mtu of %zu does not fit one UDP datagram "
                       "(at most %zu: 1472 bytes less the %zu-byte frame header)",
                       c.mtu, kMaxUdpMtu, dgram::kFrameHeader);
    }
    return Errc::kOk;
  }
  if (ring_bytes_needed(c) > c.ring_bytes) {
    return set_error(Errc::kInvalidArgument, 0,
                     "datagram link: a ring of %zu bytes cannot hold a window of %zu frames "
                     "(%zu bytes needed)",
                     c.ring_bytes, c.window, ring_bytes_needed(c));
  }
  return Errc::kOk;
}

Errc DatagramLink::open_shared_memory(Nic& nic, EventQueue* events, uint64_t user) {
  // The link is an endpoint of its own (paper 004 sect. 3), as a
  // DmqConnection is: its rings are resident while it holds a frame, and
  // its apertures do not count against the NIC's imports.
  auto endpoint = nic.create_endpoint();
  if (!endpoint) return endpoint.error();
  endpoint_ = std::move(endpoint.value());
  auto rx = DatagramReceiver::create(nic, config_, events, user, &endpoint_);
  if (!rx) return rx.error();
  auto tx = DatagramSender::create(nic, config_, &endpoint_);
  if (!tx) return tx.error();
  rx_ = std::move(rx.value());
  tx_ = std::move(tx.value());
  return Errc::kOk;
}

Errc DatagramLink::open_udp(Nic& nic) {
  wire::UdpOptions o;
  o.address = config_.udp_address;
  o.port = config_.udp_port;
  o.max_frame = dgram::kFrameHeader + config_.mtu;
  // An honest peer has at most a window of data frames and some control
  // frames in flight: the posted buffers hold them all, as the ring does.
  o.receive_buffers = config_.window + kControlReserve;
  o.wait = WaitPolicy{nic.wait_mode(), nic.spin_budget().count(), nullptr};
  auto channel = wire::UdpChannel::open(o);
  if (!channel) return append_error_context(channel.error(), "datagram link over udp");
  udp_ = std::move(channel.value());
  auto rx = DatagramReceiver::create(udp_, config_);
  if (!rx) return rx.error();
  auto tx = DatagramSender::create(udp_, config_);
  if (!tx) return tx.error();
  rx_ = std::move(rx.value());
  tx_ = std::move(tx.value());
  return Errc::kOk;
}

}  // namespace clan
