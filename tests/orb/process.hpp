// A program run in a child process (fork + exec, built on ChildProcess) with
// its stdin and stdout on pipes: line-based control with bounded waits. Exec
// keeps this safe in a test process whose ORB threads already run: the child
// only calls async-signal-safe functions before execv.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/child_process.hpp"

namespace clan::orbtest {

class Process {
 public:
  // Runs `path` with `args`; `merge_stderr` also sends its stderr to the
  // stdout pipe (otherwise it goes to the test's stderr). `env` ("NAME=value"
  // entries), if given, is the child's whole environment instead of ours.
  Process(const std::string& path, const std::vector<std::string>& args,
          bool merge_stderr = false, std::optional<std::vector<std::string>> env = std::nullopt) {
    signal(SIGPIPE, SIG_IGN);  // a write to a dead child's stdin must not kill the test
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) std::abort();
    std::vector<std::string> all{path};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& s : all) argv.push_back(s.data());
    argv.push_back(nullptr);
    std::vector<char*> envp;
    if (env) {
      for (auto& s : *env) envp.push_back(s.data());
      envp.push_back(nullptr);
    }
    child_ = std::make_unique<test::ChildProcess>([&]() -> int {
      // Async-signal-safe only from here to execv. The child dies with the test.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      dup2(in[0], 0);
      dup2(out[1], 1);
      if (merge_stderr) dup2(out[1], 2);
      if (env) execve(argv[0], argv.data(), envp.data());
      else execv(argv[0], argv.data());
      return 97;
    });
    close(in[0]);
    close(out[1]);
    in_ = in[1];
    out_ = out[0];
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process() {
    close_stdin();
    if (out_ >= 0) close(out_);
    // ChildProcess's destructor SIGKILLs and reaps a child still running.
  }

  pid_t pid() const { return child_->pid(); }

  // The next line of the child's stdout (without '\n'); nullopt on end of
  // file or if none arrives within `limit`.
  std::optional<std::string> read_line(
      std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    auto end = std::chrono::steady_clock::now() + limit;
    for (;;) {
      auto nl = buf_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return line;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd pfd{out_, POLLIN, 0};
      int r = poll(&pfd, 1, static_cast<int>(left.count()));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return std::nullopt;
      char chunk[4096];
      ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      buf_.append(chunk, static_cast<size_t>(n));
    }
  }

  // Reads lines until one starts with `prefix` (or, with `anywhere`, contains
  // it); returns that line, or nullopt on end of file or after `limit`.
  std::optional<std::string> wait_for_line(
      const std::string& prefix, std::chrono::milliseconds limit = std::chrono::seconds(20),
      bool anywhere = false) {
    auto end = std::chrono::steady_clock::now() + limit;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      auto line = read_line(left);
      if (!line) return std::nullopt;
      if (anywhere ? line->find(prefix) != std::string::npos : line->rfind(prefix, 0) == 0)
        return line;
    }
  }

  bool send_line(const std::string& line) {
    if (in_ < 0) return false;
    std::string s = line + "\n";
    return ::write(in_, s.data(), s.size()) == static_cast<ssize_t>(s.size());
  }
  void close_stdin() {
    if (in_ >= 0) close(in_);
    in_ = -1;
  }

  // Exit code (128+N for signal N), -1 if it did not exit within `limit`
  // (it is then killed). Once only.
  int wait(std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    return child_->wait(limit);
  }
  void kill_now(int sig = SIGKILL) { child_->kill_now(sig); }

 private:
  std::unique_ptr<test::ChildProcess> child_;
  int in_ = -1;
  int out_ = -1;
  std::string buf_;
};

// How a program ended and everything it printed.
struct Finished {
  int code = -1;       // exit code, -1 if it did not finish in time
  std::string output;  // stdout, and stderr if merged
  bool has(const std::string& s) const { return output.find(s) != std::string::npos; }
};

// Reads what `p` prints until it closes its output, then waits for it.
inline Finished collect(Process& p, std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  Finished f;
  while (std::optional<std::string> line = p.read_line(limit)) f.output += *line + "\n";
  f.code = p.wait(limit);
  return f;
}

// Runs a program to its end (stderr merged into stdout) and collects it.
inline Finished run_to_end(const std::string& path, const std::vector<std::string>& args,
                           const std::vector<std::string>& env) {
  Process p(path, args, /*merge_stderr=*/true, env);
  return collect(p);
}

}  // namespace clan::orbtest
