// The measuring side (A): client and sender. It sets up what the Setup asks
// for, connects to the peer's VIs, and runs each measurement with the
// peer's part of it as one command.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/activity.hpp"
#include "bench/control.hpp"
#include "clan_emul/dmq_receiver.hpp"
#include "clan_emul/dmq_sender.hpp"
#include "clan_emul/nic.hpp"
#include "via_bench/config.hpp"
#include "via_bench/protocol.hpp"
#include "via_bench/results.hpp"
#include "via_bench/vipl_side.hpp"

namespace via_bench {

class Driver {
 public:
  Driver(const Setup& setup, bench::Channel ctl, const bench::StartSignal& started)
      : setup_(setup), ctl_(std::move(ctl), &started) {}

  // Dies on any failure.
  void set_up();
  void quit();

  int64_t spin_ns() const { return spin_ns_; }
  bool pinned() const { return pinned_; }
  double connect_ms() const { return connect_ms_; }

  // Latency (driver_latency.cpp): one block of `warm` + `count` round trips,
  // the measured ones appended to `out`.
  bench::BlockActivity via_lat(uint32_t mode, uint64_t size, uint64_t warm, uint64_t count,
                               std::vector<uint64_t>& out);
  bench::BlockActivity dmq_lat(uint64_t size, uint64_t warm, uint64_t count, std::vector<uint64_t>& out);

  // Bandwidth (driver_bandwidth.cpp): `count` messages of `size`.
  BwPoint via_bw(uint32_t mode, uint64_t size, uint64_t count);
  BwPoint dmq_bw(bool dma, uint64_t size, uint64_t count);

  // Completion queues (driver_cq.cpp): n connections for about `secs`.
  CqPoint cq(uint32_t mode, int n, double secs);

 private:
  using Control = bench::Control<Command, Reply>;
  class CqClient;

  void open_raw_dmq();
  void exchange_cookies();
  void connect();
  void dmq_pio_stream(uint64_t size, uint64_t count, clan::Deadline dl);
  void dmq_dma_stream(uint64_t size, uint64_t count, clan::Deadline dl);
  BwPoint bw_point(const char* what, uint64_t size, uint64_t count, std::chrono::steady_clock::time_point t0,
                   const bench::Activity& mine);

  const Setup& setup_;
  Control ctl_;
  ViplSide main_, cq_;  // the main VI's NIC, the CQ NIC
  std::unique_ptr<clan::Nic> nic_;
  std::unique_ptr<clan::DmqSender> tx_;
  std::unique_ptr<clan::DmqReceiver> rx_;
  int64_t spin_ns_ = 0;
  bool pinned_ = false;
  double connect_ms_ = 0;
};

}  // namespace via_bench
