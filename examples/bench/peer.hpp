// The peer process of a two-process benchmark: forked, dies with its
// parent, killed by the parent on SIGINT, SIGTERM and when the watchdog
// expires. A benchmark must never leave a child behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>

namespace bench {

// Forks `body` as the peer; its return value is the peer's exit code (98 if
// it throws). The child gets SIGKILL when the parent dies
// (PR_SET_PDEATHSIG), and the parent kills the child on SIGINT, SIGTERM and
// when the watchdog (arm_watchdog) expires. Returns -1 if fork fails.
pid_t spawn_peer(const std::function<int()>& body);

// (Re)arms the watchdog: if not re-armed or disarmed within `seconds`, the
// peer is killed and this process exits with status 3.
void arm_watchdog(unsigned seconds);
void disarm_watchdog();

// Waits up to `limit` for the peer to exit, then kills it. Returns its exit
// code, 128+N for signal N, -1 if it had to be killed.
int reap_peer(pid_t pid, std::chrono::milliseconds limit);

}  // namespace bench
