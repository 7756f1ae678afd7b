#include "orb_transports/otp/otp_link_config.hpp"

#include "orb_transports/common/fabric.hpp"

namespace clanorb {

clan::DatagramLink::Config otp_link_config() {
  const FabricOptions& o = fabric_options();
  clan::DatagramLink::Config c;
  c.window = o.otp_window;
  c.faults.seed = o.otp_seed;
  c.faults.drop_rate = o.otp_loss_ppm / 1e6;
  c.faults.corrupt_rate = o.otp_corrupt_ppm / 1e6;
  // Room in the ring for a whole window of full frames plus control frames.
  const size_t need = clan::DatagramLink::ring_bytes_needed(c);
  while (c.ring_bytes < need) c.ring_bytes *= 2;
  return c;
}

}  // namespace clanorb
