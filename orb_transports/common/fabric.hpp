// The process's attachment to the emulated CLAN fabric, shared by every
// clanorb transport in the process: one NIC and one out-of-band connection
// manager (node name "orb<pid>" unless an endpoint names one). Created on
// first use; endpoints and connections hold a reference, so it lives until
// the last of them is gone and the ORB was destroyed.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "clan_emul/nic.hpp"
#include "clan_emul/oob_manager.hpp"

namespace clanorb {

// Set from the ORB options; their ranges, units and uses are in the option
// table (option_table.cpp), which reads its defaults from here.
struct FabricOptions {
  // -ORBclanSpinNs: how long a blocked Recv/Send spins before it sleeps.
  int64_t spin_ns = 50'000;
  // -ORBclanWaitMode: how it waits (poll, block, adaptive).
  clan::WaitMode wait_mode = clan::WaitMode::kAdaptive;
  // -ORBclanRingBytes / -ORBclanDmaThreshold
  size_t ring_bytes = 256 * 1024;
  size_t dma_threshold = 0;  // 0: never DMA (PIO measured faster on this platform)
  // giop:otp: the emulated lossy link (what this process sends) and the protocol.
  uint32_t otp_loss_ppm = 0;     // -ORBotpLossPpm: datagrams dropped, per million
  uint32_t otp_corrupt_ppm = 0;  // -ORBotpCorruptPpm: datagrams corrupted (CRC discards them)
  uint32_t otp_seed = 1;         // -ORBotpSeed: the fault model's seed
  uint32_t otp_window = 16;      // -ORBotpWindow: credits per direction (0 = no flow control)
  uint32_t otp_rto_us = 2000;    // -ORBotpRtoUs: retransmission timeout
  // -ORBclanMaxConnections: connections the process's NIC has room for
  // (giop:clan and giop:otp, both directions); see nic_config(). Four times
  // the frames: connections beyond the frames wait in host memory.
  uint32_t max_connections = 4096;
  // -ORBclanMaxConnectionsPerClient: per client node and endpoint (0 = no limit).
  uint32_t max_connections_per_client = 64;
  // The resident set of every NIC of the process, giop:via's too (paper 004
  // sect. 4): -ORBclanFrames, -ORBclanRemapNs, -ORBclanReplacement (a
  // clan::Replacement). The defaults are clan::NicConfig's.
  uint32_t frames = clan::NicConfig{}.frames;
  uint64_t remap_ns = static_cast<uint64_t>(clan::NicConfig{}.remap_cost.count());
  uint32_t replacement = static_cast<uint32_t>(clan::NicConfig{}.replacement);
  // Across hosts: -ORBclanHost, this host's address that other hosts reach
  // (empty: shared memory only, this host's clients only); -ORBclanProvider,
  // the libfabric provider of the NIC's wire.
  std::string host;
  std::string provider = clan::WireConfig{}.provider;
};
FabricOptions& fabric_options();

// Across hosts, shared by every NIC of the process (the fabric's and
// giop:via's): where a NIC's wire and its node's tcp listener listen,
// "HOST:0" (any free port) at `o.host` (-ORBclanHost); empty without it.
std::string host_listen_address(const FabricOptions& o);
// "HOST:PORT", where nodes of other hosts reach a node whose tcp listener
// has `oob_port`; empty for port 0 (no listener) or without -ORBclanHost.
std::string reach_at(uint16_t oob_port);
// Logs that `scheme`'s node `name` serves this host only: its wire to other
// hosts failed for `why`. Other hosts are a bonus: the node opens without it.
void log_this_host_only(const char* scheme, const std::string& name, const std::string& why);

// The process's NIC sized for `max_connections` connections: each is an
// endpoint of its own (paper 004), with two exported regions, two tripwires,
// two imported apertures (the endpoint's, not counted against the NIC's
// imports) and a source on an event queue. Endpoints are sized exactly (they
// are what decides the limit); the other tables are never smaller than the
// NIC's defaults. The frames, re-mapping cost and replacement are the
// options'.
clan::NicConfig nic_config(const std::string& name, const FabricOptions& o);

class Fabric {
 public:
  // The process's fabric, starting it under `node` (or the default name) if
  // needed. Null, with a reason logged under `scheme` (the transport that
  // asked: "giop:clan", "giop:otp"), if it cannot start, or if `node` is
  // given and differs from the running node's name.
  static std::shared_ptr<Fabric> get(const char* scheme, const std::string& node = "");
  // Drops the process's reference (called when the last ORB is destroyed).
  static void release();

  clan::Nic& nic() { return *nic_; }
  clan::OobManager& oob() { return *oob_; }
  const std::string& node() const { return oob_->node(); }
  // "HOST:PORT" where nodes of other hosts reach this one (-ORBclanHost);
  // empty without it.
  std::string reach() const;
  // The running fabric's reach(), without starting one.
  static std::string published_reach();

 private:
  std::unique_ptr<clan::Nic> nic_;
  std::unique_ptr<clan::OobManager> oob_;
};

// This host's boot id: IOR components carry it, so a client uses a shared
// memory transport only for a server on the same machine.
const std::string& boot_id();

}  // namespace clanorb
