// Where the wire and udp tests put their two ends. By default both are on
// 127.0.0.1, in this process's network namespace. Run inside host B of
// scripts/two_hosts.sh by tests/hosts/hostile_across_hosts.sh, the NICs and
// links listen on B's address (CLANORB_TEST_HOST) and the hostile peers make
// their endpoints in host A's network namespace (CLANORB_TEST_PEER_NETNS, a
// file for setns; their address CLANORB_TEST_PEER_HOST), so that all they send crosses the veth pair between the
// two hosts.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

namespace clan::test {

inline std::string test_host() {
  const char* h = std::getenv("CLANORB_TEST_HOST");
  return h && *h ? h : "127.0.0.1";
}

// The address of the hostile peers' host (CLANORB_TEST_PEER_HOST).
inline std::string test_peer_host() {
  const char* h = std::getenv("CLANORB_TEST_PEER_HOST");
  return h && *h ? h : "127.0.0.1";
}

// Moves the calling thread into the peer's network namespace, if one is set.
inline void enter_peer_netns() {
  const char* ns = std::getenv("CLANORB_TEST_PEER_NETNS");
  if (!ns || !*ns) return;
  const int fd = ::open(ns, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot enter the peer's network namespace " + std::string(ns) + ": " + why);
  }
  ::close(fd);
}

// What `make` returns, run on a thread of its own in the peer's network
// namespace: the sockets it opens stay there when used from other threads.
template <class F>
auto in_peer_netns(F make) -> decltype(make()) {
  std::optional<decltype(make())> out;
  std::exception_ptr failed;
  std::thread t([&] {
    try {
      enter_peer_netns();
      out.emplace(make());
    } catch (...) {
      failed = std::current_exception();
    }
  });
  t.join();
  if (failed) std::rethrow_exception(failed);
  return std::move(*out);
}

}  // namespace clan::test
