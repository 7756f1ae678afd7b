#include "bench/peer.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace bench {
namespace {

volatile pid_t g_child = -1;

void kill_child_and_exit(int sig) {
  pid_t c = g_child;
  if (c > 0) kill(c, SIGKILL);
  const char* msg = sig == SIGALRM ? "bench: watchdog expired, peer killed\n"
                                   : "bench: interrupted, peer killed\n";
  ssize_t ignored = ::write(2, msg, std::strlen(msg));
  (void)ignored;
  _exit(sig == SIGALRM ? 3 : 128 + sig);
}

[[noreturn]] void run_child(pid_t parent, const std::function<int()>& body) {
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

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -2;
}

// Without pidfd_open: polls waitpid. Returns the exit code, or -3 if the
// peer is still running at `limit`.
int poll_waitpid(pid_t pid, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return exit_code(status);
    usleep(1000);
  }
  return -3;
}

}  // namespace

pid_t spawn_peer(const std::function<int()>& body) {
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) run_child(parent, body);
  g_child = pid;
  struct sigaction sa {};
  sa.sa_handler = kill_child_and_exit;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGALRM, &sa, nullptr);
  return pid;
}

void arm_watchdog(unsigned seconds) { alarm(seconds); }
void disarm_watchdog() { alarm(0); }

int reap_peer(pid_t pid, std::chrono::milliseconds limit) {
  if (pid <= 0) return -1;
  bool exited = false;
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    pollfd pfd{pidfd, POLLIN, 0};
    exited = poll(&pfd, 1, static_cast<int>(limit.count())) > 0;
    close(pidfd);
  } else {
    const int code = poll_waitpid(pid, limit);
    if (code != -3) {
      g_child = -1;
      return code;
    }
  }
  if (!exited) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  g_child = -1;
  return exited ? exit_code(status) : -1;
}

}  // namespace bench
