// One side of bench_clan_wire: a NIC with a wire, the region the other
// side writes into (tripwires on its bell and its counter), and once
// linked, the aperture onto the other side's region over the wire.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "clan_emul/aperture.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/region.hpp"
#include "clan_emul/tripwire.hpp"
#include "clan_wire_bench/layout.hpp"
#include "clan_wire_bench/rendezvous.hpp"

namespace clan_wire_bench {

// How long a side waits for the other before it gives up on it.
constexpr auto kPeerPatience = std::chrono::seconds(60);

class Side {
 public:
  // Opens the NIC `name` listening on `ip` (port 0: any), exports the
  // region and arms its tripwires; false with words on stderr.
  bool open(const char* name, const std::string& ip, int64_t spin_ns);
  // Links the wire to the other side's NIC and imports its region.
  bool link(uint64_t nic_id, const std::string& address, const clan::RdmaCookie& cookie);
  Rendezvous rendezvous() const;
  std::chrono::nanoseconds spin_budget() const { return nic_->spin_budget(); }

  // Both tripwires wait in `mode` from now on.
  void set_mode(clan::WaitMode mode);
  uint64_t word(size_t at) const {
    return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(region_.data() + at)).load(std::memory_order_acquire);
  }
  const std::byte* at(size_t offset) const { return region_.data() + offset; }

  // Waits on the bell's tripwire until the bell differs from `last`: the
  // new bell, or 0 if the other side was silent for kPeerPatience.
  uint64_t next_bell(uint64_t last) const;
  // Waits until the bell reads `value`: false on silence.
  bool await_bell(uint64_t value, clan::Deadline deadline = clan::Deadline::after(kPeerPatience)) const;
  // Waits until the counter is at least `value`: false on silence.
  bool await_counter(uint64_t value) const;

  // Writes into the other side's region; rings its bell; sets its counter.
  bool put(size_t offset, const void* src, size_t len);
  bool ring(uint64_t value) { return put_word(kBellAt, value); }
  bool count(uint64_t value) { return put_word(kCounterAt, value); }

 private:
  bool put_word(size_t offset, uint64_t value);

  std::unique_ptr<clan::Nic> nic_;
  clan::Region region_;
  clan::Tripwire bell_, counter_;
  clan::Aperture peer_;
};

}  // namespace clan_wire_bench
