// The peer's "I am awake" for each command: a counter in a page shared
// across the fork. The peer bumps it when it starts a command, and the
// measuring side spins until it sees the command's number before it starts
// timing, so a block does not start with both sides asleep (a wake-up takes
// longer than the spin budget, and two sleepers stay in that mode).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace bench {

class StartSignal {
 public:
  // Maps the page; dies if it cannot. Make it before the fork.
  StartSignal();

  // The peer: it has started the next command.
  void started() const { count_->fetch_add(1, std::memory_order_release); }

  // The measuring side: spins until the peer has started command number
  // `n` (counted from 1); dies after 30 s.
  void wait_for(uint64_t n, const std::string& what) const;

 private:
  std::atomic<uint64_t>* count_ = nullptr;
};

}  // namespace bench
