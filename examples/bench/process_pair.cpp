#include "bench/process_pair.hpp"

#include <cstdio>

#include "bench/peer.hpp"
#include "bench/session.hpp"

namespace bench {

ProcessPair::ProcessPair(const std::function<int(Channel)>& peer_main) {
  Channel theirs;
  if (!Channel::make_pair(ctl_, theirs)) die("control socketpair failed");
  std::fflush(nullptr);
  arm_watchdog(120);
  peer_ = spawn_peer([&] {
    ctl_.reset();
    return peer_main(std::move(theirs));
  });
  if (peer_ < 0) die("fork failed");
  register_peer(peer_);
}

int ProcessPair::finish(std::chrono::milliseconds limit) {
  const int code = reap_peer(peer_, limit);
  register_peer(-1);
  peer_ = -1;
  disarm_watchdog();
  remove_runtime_dir();
  if (code != 0) std::fprintf(stderr, "%s: peer exited with status %d\n", program_name(), code);
  return code;
}

}  // namespace bench
