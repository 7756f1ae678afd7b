// Shared by the tests of the out-of-band connection manager (test_oob_*.cpp).
// Multi-process: every manager is created after fork(), in the process that
// uses it; a child reports through its exit code (and a pipe); the parent
// waits for it with a bound and kills it in cleanup, so every test ends even
// when the code under test is wrong.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "clan_emul/oob_manager.hpp"
#include "clan_emul/oob_wire.hpp"

namespace clan::oob_test {

using namespace std::chrono_literals;

// A private runtime dir per test, removed at the end.
struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/clanoob-XXXXXX";
    if (::mkdtemp(t)) path = t;
  }
  ~TempDir() {
    if (DIR* d = ::opendir(path.c_str())) {
      while (dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n != "." && n != "..") ::unlink((path + "/" + n).c_str());
      }
      ::closedir(d);
    }
    ::rmdir(path.c_str());
  }
  bool has(const std::string& file) const {
    struct stat st {};
    return ::stat((path + "/" + file).c_str(), &st) == 0;
  }
};

inline OobConfig config(const TempDir& dir, const std::string& node, std::chrono::milliseconds hb = 100ms,
                 std::chrono::milliseconds timeout = 1000ms) {
  OobConfig c;
  c.node = node;
  c.runtime_dir = dir.path;
  c.heartbeat_interval = hb;
  c.peer_timeout = timeout;
  return c;
}

// As config(), and listening on tcp at 127.0.0.1, on a port the system picks.
inline OobConfig tcp_config(const TempDir& dir, const std::string& node, std::chrono::milliseconds hb = 100ms,
                            std::chrono::milliseconds timeout = 1000ms) {
  OobConfig c = config(dir, node, hb, timeout);
  c.listen = "127.0.0.1:0";
  return c;
}

inline std::vector<std::byte> pattern(std::size_t n, uint8_t seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::byte(static_cast<uint8_t>(seed + i * 7 + i / 251));
  return v;
}

// Line-oriented pipe end helpers.
inline bool write_line(int fd, const std::string& s) {
  std::string l = s + "\n";
  return ::write(fd, l.data(), l.size()) == static_cast<ssize_t>(l.size());
}
inline std::optional<std::string> read_line(int fd, Deadline d) {
  std::string out;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    int rc = ::poll(&p, 1, d.remaining_ms());
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return std::nullopt;
    char c;
    if (::read(fd, &c, 1) != 1) return std::nullopt;  // EOF: the other side died
    if (c == '\n') return out;
    out.push_back(c);
  }
}

inline int pidfd_open_(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

// A forked child running `body`; killed and reaped in cleanup.
class Child {
 public:
  template <class F>
  explicit Child(F body) {
    int up[2], down[2];
    if (::pipe2(up, O_CLOEXEC) != 0 || ::pipe2(down, O_CLOEXEC) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(up[0]);
      ::close(down[1]);
      up_ = up[1];
      down_ = down[0];
      int rc = 97;
      try {
        rc = body(*this);
      } catch (...) {
        rc = 98;
      }
      ::_exit(rc);
    }
    ::close(up[1]);
    ::close(down[0]);
    up_ = up[0];
    down_ = down[1];
  }
  ~Child() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (up_ >= 0) ::close(up_);
    if (down_ >= 0) ::close(down_);
  }
  pid_t pid() const { return pid_; }

  // Child side.
  bool tell(const std::string& s) { return write_line(up_, s); }
  std::optional<std::string> heard(Deadline d) { return read_line(down_, d); }
  // Parent side.
  bool say(const std::string& s) { return write_line(down_, s); }
  std::optional<std::string> hear(Deadline d) { return read_line(up_, d); }

  void signal(int sig) { ::kill(pid_, sig); }
  void stop() {  // returns once the child is stopped
    ::kill(pid_, SIGSTOP);
    int st = 0;
    ::waitpid(pid_, &st, WUNTRACED);
  }
  // Exit code; 128+signal if killed; -1 if still running at the deadline (then killed).
  int wait_exit(Deadline d) {
    if (reaped_) return status_;
    int fd = pidfd_open_(pid_);
    if (fd >= 0) {
      pollfd p{fd, POLLIN, 0};
      while (::poll(&p, 1, d.remaining_ms()) < 0 && errno == EINTR) {
      }
      ::close(fd);
    }
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r != pid_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &st, 0);
      reaped_ = true;
      status_ = -1;
      return status_;
    }
    reaped_ = true;
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return status_;
  }
  int kill_and_reap() {
    ::kill(pid_, SIGKILL);
    return wait_exit(Deadline::after(10s));
  }

 private:
  pid_t pid_ = -1;
  int up_ = -1, down_ = -1;
  bool reaped_ = false;
  int status_ = -1;
};

// In a child: no Catch2. A failed check prints its line and fails the child.
#define CHILD_CHECK(cond)                                                     \
  do {                                                                        \
    if (!(cond)) {                                                            \
      std::fprintf(stderr, "child check failed at line %d: %s\n", __LINE__, #cond); \
      return 1;                                                               \
    }                                                                         \
  } while (0)

inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Counts on_down calls and lets a test wait for the first one.
struct DownProbe {
  std::mutex mu;
  std::condition_variable cv;
  int calls = 0;
  OobState state = OobState::kConnected;
  std::thread::id thread;
  std::function<void(OobState)> fn() {
    return [this](OobState s) {
      std::lock_guard g(mu);
      ++calls;
      state = s;
      thread = std::this_thread::get_id();
      cv.notify_all();
    };
  }
  bool wait(Deadline d) {
    std::unique_lock g(mu);
    return cv.wait_until(g, d.when(), [this] { return calls > 0; });
  }
  int count() {
    std::lock_guard g(mu);
    return calls;
  }
};

// In a child: accepts `n` requests on `l`, answering each with its request
// blob reversed, and keeps the connections in `conns`.
inline int accept_reversed(OobListener& l, int n, std::vector<std::shared_ptr<OobConnection>>& conns) {
  for (int i = 0; i < n; ++i) {
    auto req = l.next_request(Deadline::after(20s));
    CHILD_CHECK(req.ok());
    std::vector<std::byte> back(req->peer_blob().rbegin(), req->peer_blob().rend());
    auto c = req->accept(std::move(back));
    CHILD_CHECK(c.ok());
    conns.push_back(c.value());
  }
  return 0;
}

// A child that holds node `name`, listens on `port`, accepts `n` requests
// (answering with the request blob reversed), says "accepted", then waits for
// the parent's "done" (or dies when told to by a signal).
inline int accepting_server(Child& self, const TempDir& dir, const std::string& name, uint16_t port, int n,
                     std::chrono::milliseconds hb = 100ms, std::chrono::milliseconds timeout = 1000ms) {
  auto mgr = OobManager::start(config(dir, name, hb, timeout));
  CHILD_CHECK(mgr.ok());
  auto l = (*mgr)->listen(port);
  CHILD_CHECK(l.ok());
  self.tell("ready");
  std::vector<std::shared_ptr<OobConnection>> conns;
  if (int rc = accept_reversed(**l, n, conns); rc != 0) return rc;
  self.tell("accepted");
  auto done = self.heard(Deadline::after(60s));
  CHILD_CHECK(done && *done == "done");
  return 0;
}

// Takes node `name`'s lock in this process, as a node's manager would.
inline int hold_node_lock(const TempDir& dir, const std::string& name) {
  int fd = ::open((dir.path + "/" + name + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  if (fd >= 0 && ::fcntl(fd, F_OFD_SETLK, &fl) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// A child that holds node `name` until killed.
inline int holding_node(Child& self, const TempDir& dir, const std::string& name) {
  auto mgr = OobManager::start(config(dir, name));
  CHILD_CHECK(mgr.ok());
  self.tell("ready");
  self.heard(Deadline::after(60s));
  return 0;
}

// Leaves behind the files of node `name`, as a process killed while holding it does.
inline void leave_killed_node(const TempDir& dir, const std::string& name) {
  Child holder([&](Child& self) { return holding_node(self, dir, name); });
  REQUIRE(holder.hear(Deadline::after(20s)) == "ready");
  holder.kill_and_reap();
}

// Sends `raw` every kind of malformed frame, and valid frames mutated at
// random (some stay valid), derived from `valid`; returns how many of them
// are certainly malformed.
inline uint64_t send_garbage(zmq::socket_t& raw, const oob_wire::Message& valid) {
  using namespace oob_wire;
  auto send = [&](const std::vector<std::byte>& f) { raw.send(zmq::buffer(f), zmq::send_flags::none); };
  auto sendv = [&](std::initializer_list<int> bytes) {
    std::vector<std::byte> f;
    for (int b : bytes) f.push_back(std::byte(static_cast<uint8_t>(b)));
    send(f);
  };
  auto good = encode(valid);

  uint64_t expected_malformed = 0;
  send({});
  sendv({1});
  sendv({'h', 'e', 'l', 'l', 'o'});
  expected_malformed += 3;
  raw.send(zmq::buffer(good), zmq::send_flags::sndmore);  // two frames: not one message
  raw.send(zmq::buffer(good), zmq::send_flags::none);
  expected_malformed += 1;
  for (auto [off, v] : std::initializer_list<std::pair<std::size_t, int>>{
           {0, 0}, {4, 9}, {5, 0}, {5, 200}, {6, 0}, {6, 250}, {7, '/'}}) {
    auto f = good;
    f[off] = std::byte(static_cast<uint8_t>(v));
    send(f);
    ++expected_malformed;
  }
  {
    auto f = good;  // blob length claims 4 GiB
    std::size_t blob_len_at = f.size() - valid.blob.size() - 4;
    for (int i = 0; i < 4; ++i) f[blob_len_at + i] = std::byte{0xff};
    send(f);
    f = good;
    f.resize(f.size() - 1);  // truncated
    send(f);
    f = good;
    f.push_back(std::byte{0});  // trailing byte
    send(f);
    expected_malformed += 3;
  }
  std::mt19937 rng(12345);
  for (int i = 0; i < 500; ++i) {  // random bytes (a valid magic has odds 2^-32)
    std::vector<std::byte> f(rng() % 300);
    for (auto& b : f) b = std::byte(static_cast<uint8_t>(rng()));
    send(f);
    ++expected_malformed;
  }
  for (int i = 0; i < 2000; ++i) {  // mutated valid frames of every type: some stay valid
    Message m = valid;
    m.hdr.type = static_cast<MsgType>(1 + rng() % kMaxMsgType);
    m.dst_conn = 1 + rng() % 4;
    auto f = encode(m);
    for (int k = 1 + static_cast<int>(rng() % 3); k > 0; --k) {
      f[rng() % f.size()] ^= std::byte(static_cast<uint8_t>(1 + rng() % 255));
    }
    if (rng() % 4 == 0) f.resize(rng() % f.size());
    send(f);
  }
  return expected_malformed;
}

}  // namespace clan::oob_test
