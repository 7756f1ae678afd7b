// Multi-process test support: run a function in a forked child and collect
// its exit code with a bounded wait; pass plain objects through a pipe. The
// child never touches Catch2: it reports through its exit code.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <type_traits>

namespace clan::test {

class ChildProcess {
 public:
  explicit ChildProcess(std::function<int()> body) {
    pid_ = fork();
    if (pid_ == 0) {
      int code = 99;
      try {
        code = body();
      } catch (...) {
        code = 98;
      }
      _exit(code);
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  // The child's exit code; -1 if it did not exit within `limit` (it is then
  // killed), 128+N if it died of signal N.
  int wait(std::chrono::milliseconds limit = std::chrono::seconds(30)) {
    // A pidfd becomes readable when the child exits: a bounded wait with no polling loop.
    int status = 0;
    int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
    pollfd pfd{pidfd, POLLIN, 0};
    bool exited = pidfd >= 0 && poll(&pfd, 1, static_cast<int>(limit.count())) > 0;
    if (pidfd >= 0) close(pidfd);
    if (!exited) kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    reaped_ = true;
    if (!exited) return -1;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -2;
  }
  void kill_now(int sig = SIGKILL) { kill(pid_, sig); }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

// A one-way pipe for trivially copyable values, with bounded reads.
class Pipe {
 public:
  Pipe() {
    if (pipe(fds_) != 0) std::abort();
  }
  ~Pipe() {
    close(fds_[0]);
    close(fds_[1]);
  }
  template <class T>
  bool put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    return ::write(fds_[1], &v, sizeof v) == static_cast<ssize_t>(sizeof v);
  }
  template <class T>
  bool get(T& v, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    static_assert(std::is_trivially_copyable_v<T>);
    char* p = reinterpret_cast<char*>(&v);
    size_t got = 0;
    auto end = std::chrono::steady_clock::now() + limit;
    while (got < sizeof v) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd pfd{fds_[0], POLLIN, 0};
      if (poll(&pfd, 1, static_cast<int>(left.count())) <= 0) continue;
      ssize_t n = ::read(fds_[0], p + got, sizeof v - got);
      if (n <= 0) return false;
      got += static_cast<size_t>(n);
    }
    return true;
  }

 private:
  int fds_[2];
};

}  // namespace clan::test
