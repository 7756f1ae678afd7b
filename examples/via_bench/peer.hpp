// The peer (B): the echo server and receiver of the VIA benchmarks. It sets
// up what the Setup asks for, accepts A's connections, then runs A's
// commands until told to quit.
#pragma once

#include <memory>
#include <vector>

#include "bench/channel.hpp"
#include "bench/start_signal.hpp"
#include "clan_emul/dmq_receiver.hpp"
#include "clan_emul/dmq_sender.hpp"
#include "clan_emul/nic.hpp"
#include "via_bench/config.hpp"
#include "via_bench/protocol.hpp"
#include "via_bench/vipl_side.hpp"

namespace via_bench {

class Peer {
 public:
  Peer(const Setup& setup, bench::Channel ctl, const bench::StartSignal& started);
  // The peer's exit code: 0, or where it failed (10-38 set-up, 40-42 the
  // control channel, 50 a command whose failure it reported).
  int run();

 private:
  // cq_server's status when its "ready" could not be sent: the channel is
  // gone, so there is no one to report a failure to.
  static constexpr int32_t kChannelLost = -1;

  int set_up();
  int open_raw_dmq();
  int listen(VIP_ULONG timeout_ms, bool accept);
  int serve();
  // Each command returns 0 or the failure's status for A.
  int32_t run_command(const Command& c, Reply& r);
  int32_t via_latency(const Command& c);
  int32_t dmq_latency(const Command& c);
  int32_t via_stream(const Command& c, Reply& r);
  int32_t dmq_stream(const Command& c, Reply& r);
  int32_t cq_server(const Command& c, Reply& r);
  int32_t cq_echo(VIP_VI_HANDLE vi, const VIP_DESCRIPTOR* d, std::vector<bool>& pending);
  int32_t cq_drain(const std::vector<bool>& pending);

  const Setup& setup_;
  bench::Channel ctl_;
  const bench::StartSignal& started_;
  ViplSide main_, cq_;
  std::unique_ptr<clan::Nic> nic_;
  std::unique_ptr<clan::DmqSender> tx_;
  std::unique_ptr<clan::DmqReceiver> rx_;
  std::vector<std::byte> zero_;
};

}  // namespace via_bench
