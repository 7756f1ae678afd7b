// Process plumbing of the clanorb benchmarks: a forked peer that dies with
// its parent, a bidirectional control channel for plain structs with bounded
// reads, a watchdog that kills the peer if a phase hangs, and CPU pinning.
// A benchmark must never leave a child behind.
#pragma once

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <type_traits>

namespace bench {

// ---------------------------------------------------------------------------
// The peer process

namespace detail {
inline volatile pid_t g_child = -1;

inline void kill_child_and_exit(int sig) {
  pid_t c = g_child;
  if (c > 0) kill(c, SIGKILL);
  const char* msg = sig == SIGALRM ? "bench: watchdog expired, peer killed\n"
                                   : "bench: interrupted, peer killed\n";
  ssize_t ignored = ::write(2, msg, std::strlen(msg));
  (void)ignored;
  _exit(sig == SIGALRM ? 3 : 128 + sig);
}
}  // namespace detail

// Forks `body` as the peer. The child gets SIGKILL when the parent dies
// (PR_SET_PDEATHSIG), and the parent kills the child on SIGINT, SIGTERM and
// when the watchdog (arm_watchdog) expires.
inline pid_t spawn_peer(const std::function<int()>& body) {
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(97);  // the parent died before prctl
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGALRM, SIG_DFL);
    int code = 99;
    try {
      code = body();
    } catch (...) {
      code = 98;
    }
    std::fflush(nullptr);
    _exit(code);
  }
  detail::g_child = pid;
  struct sigaction sa {};
  sa.sa_handler = detail::kill_child_and_exit;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGALRM, &sa, nullptr);
  return pid;
}

// (Re)arms the watchdog: if not re-armed or disarmed within `seconds`, the
// peer is killed and this process exits with status 3.
inline void arm_watchdog(unsigned seconds) { alarm(seconds); }
inline void disarm_watchdog() { alarm(0); }

// Waits up to `limit` for the peer to exit, then kills it. Returns its exit
// code, 128+N for signal N, -1 if it had to be killed.
inline int reap_peer(pid_t pid, std::chrono::milliseconds limit) {
  if (pid <= 0) return -1;
  int status = 0;
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  bool exited = false;
  if (pidfd >= 0) {
    pollfd pfd{pidfd, POLLIN, 0};
    exited = poll(&pfd, 1, static_cast<int>(limit.count())) > 0;
    close(pidfd);
  } else {
    auto end = std::chrono::steady_clock::now() + limit;
    while (!exited && std::chrono::steady_clock::now() < end) {
      pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        detail::g_child = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      usleep(1000);
    }
  }
  if (!exited) kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  detail::g_child = -1;
  if (!exited) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -2;
}

// ---------------------------------------------------------------------------
// Control channel: one end per process, plain structs, bounded reads.

class Channel {
 public:
  Channel() = default;
  explicit Channel(int fd) : fd_(fd) {}
  Channel(Channel&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Channel& operator=(Channel&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.fd_;
      o.fd_ = -1;
    }
    return *this;
  }
  ~Channel() { reset(); }
  void reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  int fd() const { return fd_; }

  // A connected pair (SOCK_STREAM); a.first for one process, .second for the other.
  static bool make_pair(Channel& a, Channel& b, int type = SOCK_STREAM) {
    int fds[2];
    if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, fds) != 0) return false;
    a = Channel(fds[0]);
    b = Channel(fds[1]);
    return true;
  }

  bool put_bytes(const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    while (n > 0) {
      ssize_t w = ::write(fd_, c, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      c += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  }
  // Reads exactly n bytes, or fails on EOF, error or when `limit` passes.
  bool get_bytes(void* p, size_t n, std::chrono::milliseconds limit) {
    char* c = static_cast<char*>(p);
    auto end = std::chrono::steady_clock::now() + limit;
    while (n > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd pfd{fd_, POLLIN, 0};
      int r = poll(&pfd, 1, static_cast<int>(left.count()));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) continue;
      ssize_t got = ::read(fd_, c, n);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      c += got;
      n -= static_cast<size_t>(got);
    }
    return true;
  }
  template <class T>
  bool put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    return put_bytes(&v, sizeof v);
  }
  template <class T>
  bool get(T& v, std::chrono::milliseconds limit) {
    static_assert(std::is_trivially_copyable_v<T>);
    return get_bytes(&v, sizeof v, limit);
  }

 private:
  int fd_ = -1;
};

// ---------------------------------------------------------------------------
// Pinning

// Pins the calling thread to `cpu`; false if that CPU is not available.
inline bool pin_to_cpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

// The n-th CPU this process may run on, or -1.
inline int nth_allowed_cpu(int n) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set) && n-- == 0) return c;
  }
  return -1;
}

}  // namespace bench
