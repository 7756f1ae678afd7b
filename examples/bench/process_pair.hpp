// A benchmark's two processes: this one measures (A), a forked peer (B)
// serves, and a control channel joins them.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>

#include "bench/channel.hpp"

namespace bench {

class ProcessPair {
 public:
  // Forks `peer_main` as the peer, which gets its end of the control
  // channel and returns its exit code. Arms the watchdog (120 s) and
  // registers the peer for die(); dies if the channel or the fork fails.
  explicit ProcessPair(const std::function<int(Channel)>& peer_main);
  ProcessPair(const ProcessPair&) = delete;
  ProcessPair& operator=(const ProcessPair&) = delete;

  // This process's end of the control channel.
  Channel& control() { return ctl_; }
  Channel take_control() { return std::move(ctl_); }
  pid_t peer() const { return peer_; }

  // After the peer was told to quit: waits for it to exit (killing it after
  // `limit`), disarms the watchdog and removes the runtime directory.
  // Returns the peer's exit code, reported on stderr if not 0.
  int finish(std::chrono::milliseconds limit = std::chrono::milliseconds(10000));

 private:
  Channel ctl_;
  pid_t peer_ = -1;
};

}  // namespace bench
