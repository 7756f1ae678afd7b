#include "orb_transports/otp/otp_link_config.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include "orb_transports/common/fabric.hpp"

namespace clanorb {

std::string udp_bind_address(const std::string& host) {
  in_addr a{};
  if (::inet_pton(AF_INET, host.c_str(), &a) == 1) return host;
  addrinfo hints{};
  hints.ai_family = AF_INET;  // as the NIC's wire: IPv4 only
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (host.empty() || ::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || !res) return "";
  char buf[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(res->ai_addr)->sin_addr, buf, sizeof buf);
  ::freeaddrinfo(res);
  return buf;
}

clan::DatagramLink::Config otp_link_config(bool across_hosts) {
  const FabricOptions& o = fabric_options();
  clan::DatagramLink::Config c;
  c.window = o.otp_window;
  c.faults.seed = o.otp_seed;
  c.faults.drop_rate = o.otp_loss_ppm / 1e6;
  c.faults.corrupt_rate = o.otp_corrupt_ppm / 1e6;
  if (across_hosts) {
    // UDP may also reorder; the link discards a late frame as lost, which
    // omniTransport recovers as it does any loss (paper 002 sect. 3).
    c.channel = clan::DatagramChannel::kUdp;
    c.mtu = clan::DatagramLink::kMaxUdpMtu;
    c.udp_address = udp_bind_address(o.host);
  }
  // Room in the ring for a whole window of full frames plus control frames;
  // over udp the ring is not used, but both ends still announce one size.
  const size_t need = clan::DatagramLink::ring_bytes_needed(c);
  while (c.ring_bytes < need) c.ring_bytes *= 2;
  return c;
}

}  // namespace clanorb
