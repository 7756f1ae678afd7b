// A deterministic simulated link for omniTransport in virtual time: one
// direction, in-order delivery, fixed latency plus serialisation time, seeded
// random loss, and a loss mask so a test can drop exactly the Nth packet or
// every packet of a type (like picoquic's sim_link and Aeron's loss wrapper).
// No clock, no threads; the caller owns virtual time. The random loss draws
// from the fault model's generator (clan_emul/fault_model.hpp), so that a
// seed gives the same run with every compiler and standard library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "clan_emul/fault_model.hpp"
#include "omnitransport/header.hpp"

namespace otp {

struct SimLinkConfig {
  uint64_t seed = 1;
  double loss_rate = 0.0;        // probability in [0, 1] that a datagram is dropped
  uint64_t latency_ns = 20'000;  // propagation delay
  uint64_t ns_per_byte = 0;      // serialisation time (0: infinite bandwidth)
};

struct SimLinkStats {
  uint64_t offered = 0;
  uint64_t dropped_random = 0;
  uint64_t dropped_mask = 0;
  uint64_t delivered = 0;
};

class SimLink {
 public:
  // Called for every datagram offered (index counts from 0 on this link);
  // returning true drops it. Runs before the random loss.
  using LossMask = std::function<bool(uint64_t index, const std::byte* data, size_t len)>;

  explicit SimLink(SimLinkConfig config = {});

  void set_loss_mask(LossMask mask) { mask_ = std::move(mask); }
  void set_loss_rate(double rate) { cfg_.loss_rate = rate; }

  // Offers a datagram at now_ns. Returns false if it was dropped.
  bool send(std::vector<std::byte> datagram, uint64_t now_ns);

  // Arrival time of the next datagram, if any in flight.
  std::optional<uint64_t> next_arrival() const;
  // Pops the next datagram if it has arrived by now_ns.
  bool receive(uint64_t now_ns, std::vector<std::byte>& out);

  bool idle() const { return queue_.empty(); }
  const SimLinkStats& stats() const { return stats_; }

 private:
  struct InFlight {
    uint64_t arrival;
    std::vector<std::byte> bytes;
  };
  SimLinkConfig cfg_;
  clan::Xoshiro256ss rng_;
  LossMask mask_;
  std::deque<InFlight> queue_;
  uint64_t last_arrival_ = 0;
  uint64_t index_ = 0;
  SimLinkStats stats_;
};

// Ready-made loss masks.
// Drops exactly the n-th datagram (0-based) offered to the link.
SimLink::LossMask drop_nth(uint64_t n);
// Drops the n-th datagram (0-based among those of that type) of type t; n
// empty drops every datagram of type t.
SimLink::LossMask drop_type(PacketType t, std::optional<uint64_t> n = std::nullopt);
// Drops every datagram whose index is in the set.
SimLink::LossMask drop_indices(std::vector<uint64_t> indices);

}  // namespace otp
