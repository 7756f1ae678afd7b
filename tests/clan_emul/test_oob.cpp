// Tests of the out-of-band connection manager. Multi-process: every manager is
// created after fork(), in the process that uses it; a child reports through
// its exit code (and a pipe); the parent waits for it with a bound and kills
// it in cleanup, so every test ends even when the code under test is wrong.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <future>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "clan_emul/oob_manager.hpp"
#include "clan_emul/oob_wire.hpp"
#include "clan_emul/siphash.hpp"

using namespace clan;
using namespace std::chrono_literals;

namespace {

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

OobConfig config(const TempDir& dir, const std::string& node, std::chrono::milliseconds hb = 100ms,
                 std::chrono::milliseconds timeout = 1000ms) {
  OobConfig c;
  c.node = node;
  c.runtime_dir = dir.path;
  c.heartbeat_interval = hb;
  c.peer_timeout = timeout;
  return c;
}

std::vector<std::byte> pattern(std::size_t n, uint8_t seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::byte(static_cast<uint8_t>(seed + i * 7 + i / 251));
  return v;
}

// Line-oriented pipe end helpers.
bool write_line(int fd, const std::string& s) {
  std::string l = s + "\n";
  return ::write(fd, l.data(), l.size()) == static_cast<ssize_t>(l.size());
}
std::optional<std::string> read_line(int fd, Deadline d) {
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

int pidfd_open_(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

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

double ms_since(Clock::time_point t0) {
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

// A child that holds node `name`, listens on `port`, accepts `n` requests
// (answering with the request blob reversed), says "accepted", then waits for
// the parent's "done" (or dies when told to by a signal).
int accepting_server(Child& self, const TempDir& dir, const std::string& name, uint16_t port, int n,
                     std::chrono::milliseconds hb = 100ms, std::chrono::milliseconds timeout = 1000ms) {
  auto mgr = OobManager::start(config(dir, name, hb, timeout));
  CHILD_CHECK(mgr.ok());
  auto l = (*mgr)->listen(port);
  CHILD_CHECK(l.ok());
  self.tell("ready");
  std::vector<std::shared_ptr<OobConnection>> conns;
  for (int i = 0; i < n; ++i) {
    auto req = (*l)->next_request(Deadline::after(20s));
    CHILD_CHECK(req.ok());
    std::vector<std::byte> back(req->peer_blob().rbegin(), req->peer_blob().rend());
    auto c = req->accept(std::move(back));
    CHILD_CHECK(c.ok());
    conns.push_back(c.value());
  }
  self.tell("accepted");
  auto done = self.heard(Deadline::after(60s));
  CHILD_CHECK(done && *done == "done");
  return 0;
}

}  // namespace

// ---------------------------------------------------------------- wire format

TEST_CASE("oob wire: every truncation or extension of a valid frame is rejected", "[oob]") {
  using namespace oob_wire;
  Message m;
  m.hdr.node = "node-1";
  m.hdr.instance = 42;
  m.hdr.pid = 1234;
  for (uint8_t i = 0; i < m.hdr.token.size(); ++i) m.hdr.token[i] = static_cast<uint8_t>(0xa0 + i);
  m.dst_conn = 7;
  m.src_conn = 9;
  m.port = 5;
  m.reason = RejectReason::kRejected;
  m.blob = pattern(100, 3);
  for (uint8_t t = 1; t <= kMaxMsgType; ++t) {
    m.hdr.type = static_cast<MsgType>(t);
    auto f = encode(m);
    auto ok = decode(f);
    REQUIRE(ok.has_value());
    CHECK(ok->hdr.node == "node-1");
    CHECK(ok->hdr.instance == 42);
    CHECK(ok->hdr.token == m.hdr.token);
    for (std::size_t len = 0; len < f.size(); ++len) {
      INFO(to_string(m.hdr.type) << " truncated to " << len);
      CHECK_FALSE(decode({f.data(), len}).has_value());
    }
    f.push_back(std::byte{0});
    CHECK_FALSE(decode(f).has_value());
  }
}

TEST_CASE("oob wire: bad magic, version, type, name, pid, ids and lengths are rejected", "[oob]") {
  using namespace oob_wire;
  Message m;
  m.hdr.type = MsgType::kConnectReq;
  m.hdr.node = "n";
  m.hdr.instance = 1;
  m.hdr.pid = 1;
  m.src_conn = 1;
  auto good = encode(m);
  REQUIRE(decode(good).has_value());
  auto bad = [&](std::size_t off, uint8_t v) {
    auto f = good;
    f[off] = std::byte{v};
    return !decode(f).has_value();
  };
  CHECK(bad(0, 0));     // magic
  CHECK(bad(4, 1));     // version 1, without the token
  CHECK(bad(4, 3));     // a later version
  CHECK(bad(5, 0));     // type 0
  CHECK(bad(5, 99));    // unknown type
  CHECK(bad(7, '/'));   // node name character
  CHECK(bad(6, 0));     // empty node name
  m.hdr.pid = 0;
  CHECK_FALSE(decode(encode(m)).has_value());
  m.hdr.pid = 1;
  m.src_conn = 0;
  CHECK_FALSE(decode(encode(m)).has_value());
  m.src_conn = 1;
  m.blob.resize(kMaxBlob + 1);
  CHECK_FALSE(decode(encode(m)).has_value());
  CHECK_FALSE(valid_node_name(".."));
  CHECK_FALSE(valid_node_name(std::string(65, 'a')));
  CHECK(valid_node_name(std::string(64, 'a')));
}

// ---------------------------------------------------------------- single process

TEST_CASE("oob: invalid node names and configs are kInvalidArgument", "[oob]") {
  TempDir dir;
  for (const std::string& bad : std::vector<std::string>{"", "a/b", "..", ".", "sp ace", std::string(65, 'x'), "t\tab"}) {
    INFO("name '" << bad << "'");
    CHECK(OobManager::start(config(dir, bad)).error() == Errc::kInvalidArgument);
  }
  CHECK(OobManager::start(config(dir, "ok", 100ms, 100ms)).error() == Errc::kInvalidArgument);
  auto m = OobManager::start(config(dir, "ok"));
  REQUIRE(m.ok());
  CHECK((*m)->node() == "ok");
  CHECK((*m)->connect("bad/name", 1, {}, Deadline::after(1s)).error() == Errc::kInvalidArgument);
  CHECK((*m)->connect("ok", 1, pattern(kOobMaxBlob + 1, 0), Deadline::after(1s)).error() ==
        Errc::kInvalidArgument);
}

TEST_CASE("oob: listen on a taken port is kAddressInUse, next_request times out, the port frees on destruction",
          "[oob]") {
  TempDir dir;
  auto m = OobManager::start(config(dir, "solo"));
  REQUIRE(m.ok());
  auto l = (*m)->listen(7);
  REQUIRE(l.ok());
  CHECK((*m)->listen(7).error() == Errc::kAddressInUse);
  auto t0 = Clock::now();
  CHECK((*l)->next_request(Deadline::after(50ms)).error() == Errc::kTimeout);
  CHECK(ms_since(t0) >= 45);
  l.value().reset();
  CHECK((*m)->listen(7).ok());
}

TEST_CASE("oob: a node can connect to itself", "[oob]") {
  TempDir dir;
  auto m = OobManager::start(config(dir, "self"));
  REQUIRE(m.ok());
  auto l = (*m)->listen(3);
  REQUIRE(l.ok());
  auto fut = std::async(std::launch::async, [&] {
    return (*m)->connect("self", 3, pattern(10, 1), Deadline::after(10s));
  });
  auto req = (*l)->next_request(Deadline::after(10s));
  REQUIRE(req.ok());
  CHECK(req->peer_blob() == pattern(10, 1));
  CHECK(req->peer_pid() == ::getpid());
  auto a = req->accept(pattern(20, 2));
  REQUIRE(a.ok());
  auto c = fut.get();
  REQUIRE(c.ok());
  CHECK((*c)->peer_blob() == pattern(20, 2));
  CHECK((*c)->peer_on_this_host());
  CHECK((*c)->disconnect() == Errc::kOk);
  CHECK((*a)->wait_down(Deadline::after(5s)) == Errc::kOk);
  CHECK((*a)->state() == OobState::kClosed);
}

TEST_CASE("oob: node name in use in this process is kAddressInUse, freed with its files on destruction", "[oob]") {
  TempDir dir;
  auto a = OobManager::start(config(dir, "dup"));
  REQUIRE(a.ok());
  CHECK(dir.has("dup.lock"));
  CHECK(dir.has("dup.oob"));
  CHECK(OobManager::start(config(dir, "dup")).error() == Errc::kAddressInUse);
  a.value().reset();
  CHECK_FALSE(dir.has("dup.lock"));
  CHECK_FALSE(dir.has("dup.oob"));
  CHECK(OobManager::start(config(dir, "dup")).ok());
}

// ---------------------------------------------------------------- two processes

TEST_CASE("oob: connect and accept exchange blobs both ways", "[oob]") {
  TempDir dir;
  Child child([&](Child& self) {
    auto mgr = OobManager::start(config(dir, "srv"));
    CHILD_CHECK(mgr.ok());
    auto l = (*mgr)->listen(7);
    CHILD_CHECK(l.ok());
    self.tell("ready");
    auto req = (*l)->next_request(Deadline::after(20s));
    CHILD_CHECK(req.ok());
    CHILD_CHECK(req->peer_blob() == pattern(1000, 1));
    CHILD_CHECK(req->peer_node() == "cli");
    CHILD_CHECK(req->peer_pid() == ::getppid());
    // Too large: refused without consuming the request.
    CHILD_CHECK(req->accept(pattern(kOobMaxBlob + 1, 0)).error() == Errc::kInvalidArgument);
    auto c = req->accept(pattern(kOobMaxBlob, 2));
    CHILD_CHECK(c.ok());
    CHILD_CHECK(req->accept({}).error() == Errc::kInvalidArgument);  // already answered
    CHILD_CHECK((*c)->peer_blob() == pattern(1000, 1));
    CHILD_CHECK((*c)->peer_node() == "cli");
    CHILD_CHECK((*c)->peer_pid() == ::getppid());
    CHILD_CHECK((*c)->peer_on_this_host());
    CHILD_CHECK((*c)->wait_down(Deadline::after(20s)) == Errc::kOk);
    CHILD_CHECK((*c)->state() == OobState::kClosed);
    return 0;
  });
  REQUIRE(child.hear(Deadline::after(20s)) == "ready");
  auto mgr = OobManager::start(config(dir, "cli"));
  REQUIRE(mgr.ok());
  auto c = (*mgr)->connect("srv", 7, pattern(1000, 1), Deadline::after(20s));
  REQUIRE(c.ok());
  CHECK((*c)->peer_blob() == pattern(kOobMaxBlob, 2));
  CHECK((*c)->peer_node() == "srv");
  CHECK((*c)->peer_pid() == child.pid());
  CHECK((*c)->peer_on_this_host());
  CHECK((*c)->state() == OobState::kConnected);
  CHECK((*c)->disconnect() == Errc::kOk);
  CHECK((*c)->state() == OobState::kLocalClosed);
  CHECK((*c)->disconnect() == Errc::kClosed);
  CHECK(child.wait_exit(Deadline::after(20s)) == 0);
}

TEST_CASE("oob: a rejected or dropped request makes connect return kRefused", "[oob]") {
  TempDir dir;
  Child child([&](Child& self) {
    auto mgr = OobManager::start(config(dir, "srv"));
    CHILD_CHECK(mgr.ok());
    auto l = (*mgr)->listen(7);
    CHILD_CHECK(l.ok());
    self.tell("ready");
    auto r1 = (*l)->next_request(Deadline::after(20s));
    CHILD_CHECK(r1.ok());
    r1->reject();
    {
      auto r2 = (*l)->next_request(Deadline::after(20s));
      CHILD_CHECK(r2.ok());
    }  // destroyed unanswered: rejected
    auto done = self.heard(Deadline::after(20s));
    CHILD_CHECK(done == "done");
    return 0;
  });
  REQUIRE(child.hear(Deadline::after(20s)) == "ready");
  auto mgr = OobManager::start(config(dir, "cli"));
  REQUIRE(mgr.ok());
  CHECK((*mgr)->connect("srv", 7, {}, Deadline::after(20s)).error() == Errc::kRefused);
  CHECK((*mgr)->connect("srv", 7, {}, Deadline::after(20s)).error() == Errc::kRefused);
  child.say("done");
  CHECK(child.wait_exit(Deadline::after(20s)) == 0);
}

TEST_CASE("oob: connect to a node nobody holds is refused at once, even with stale files", "[oob]") {
  TempDir dir;
  Child ghost([&](Child& self) {
    auto mgr = OobManager::start(config(dir, "ghost"));
    CHILD_CHECK(mgr.ok());
    self.tell("ready");
    self.heard(Deadline::after(60s));
    return 0;
  });
  REQUIRE(ghost.hear(Deadline::after(20s)) == "ready");
  ghost.kill_and_reap();
  // SIGKILL left the files behind: only the lock says the node is dead.
  CHECK(dir.has("ghost.lock"));
  CHECK(dir.has("ghost.oob"));

  auto mgr = OobManager::start(config(dir, "cli"));
  REQUIRE(mgr.ok());
  for (const char* node : {"nobody", "ghost"}) {
    INFO(node);
    auto t0 = Clock::now();
    CHECK((*mgr)->connect(node, 1, {}, Deadline::after(20s)).error() == Errc::kRefused);
    WARN("refused in " << ms_since(t0) << " ms");
    CHECK(ms_since(t0) < 10'000);  // far from the deadline: no waiting involved
  }
}

TEST_CASE("oob: connect to a port nobody listens on is refused", "[oob]") {
  TempDir dir;
  Child child([&](Child& self) {
    auto mgr = OobManager::start(config(dir, "srv"));
    CHILD_CHECK(mgr.ok());
    auto l = (*mgr)->listen(7);
    CHILD_CHECK(l.ok());
    self.tell("ready");
    CHILD_CHECK(self.heard(Deadline::after(20s)) == "done");
    return 0;
  });
  REQUIRE(child.hear(Deadline::after(20s)) == "ready");
  auto mgr = OobManager::start(config(dir, "cli"));
  REQUIRE(mgr.ok());
  CHECK((*mgr)->connect("srv", 8, {}, Deadline::after(20s)).error() == Errc::kRefused);
  child.say("done");
  CHECK(child.wait_exit(Deadline::after(20s)) == 0);
}

TEST_CASE("oob: connect to a peer that never answers times out at the deadline", "[oob]") {
  TempDir dir;
  bool stop_it = GENERATE(true, false);
  INFO((stop_it ? "peer SIGSTOPped" : "peer listening but never taking requests"));
  Child child([&](Child& self) {
    auto mgr = OobManager::start(config(dir, "srv"));
    CHILD_CHECK(mgr.ok());
    auto l = (*mgr)->listen(7);
    CHILD_CHECK(l.ok());
    self.tell("ready");
    self.heard(Deadline::after(60s));
    return 0;
  });
  REQUIRE(child.hear(Deadline::after(20s)) == "ready");
  if (stop_it) child.stop();
  auto mgr = OobManager::start(config(dir, "cli"));
  REQUIRE(mgr.ok());
  auto t0 = Clock::now();
  CHECK((*mgr)->connect("srv", 7, {}, Deadline::after(300ms)).error() == Errc::kTimeout);
  CHECK(ms_since(t0) >= 295);
  WARN("timed out after " << ms_since(t0) << " ms (deadline 300 ms)");
}

TEST_CASE("oob: orderly disconnect: the peer sees kClosed and on_down fires once", "[oob]") {
  TempDir dir;
  Child child([&](Child& self) {
    auto mgr = OobManager::start(config(dir, "srv"));
    CHILD_CHECK(mgr.ok());
    auto l = (*mgr)->listen(7);
    CHILD_CHECK(l.ok());
    self.tell("ready");
    auto req = (*l)->next_request(Deadline::after(20s));
    CHILD_CHECK(req.ok());
    auto c = req->accept({});
    CHILD_CHECK(c.ok());
    DownProbe probe;
    (*c)->set_on_down(probe.fn());
    CHILD_CHECK(self.heard(Deadline::after(20s)) == "armed");  // the parent's on_down is set
    CHILD_CHECK((*c)->disconnect() == Errc::kOk);
    CHILD_CHECK((*c)->state() == OobState::kLocalClosed);
    CHILD_CHECK(probe.wait(Deadline::after(20s)));
    CHILD_CHECK(probe.state == OobState::kLocalClosed);
    CHILD_CHECK(self.heard(Deadline::after(20s)) == "done");
    mgr.value().reset();
    CHILD_CHECK(probe.count() == 1);
    return 0;
  });
  REQUIRE(child.hear(Deadline::after(20s)) == "ready");
  auto mgr = OobManager::start(config(dir, "cli"));
  REQUIRE(mgr.ok());
  auto c = (*mgr)->connect("srv", 7, {}, Deadline::after(20s));
  REQUIRE(c.ok());
  DownProbe probe;
  (*c)->set_on_down(probe.fn());
  child.say("armed");
  REQUIRE((*c)->wait_down(Deadline::after(20s)) == Errc::kOk);
  CHECK((*c)->state() == OobState::kClosed);
  REQUIRE(probe.wait(Deadline::after(20s)));
  CHECK(probe.thread != std::this_thread::get_id());  // the manager thread
  child.say("done");
  CHECK(child.wait_exit(Deadline::after(20s)) == 0);
  mgr.value().reset();  // nothing may call it again, not even the manager's shutdown
  CHECK(probe.count() == 1);
  CHECK(probe.state == OobState::kClosed);
  // Set after the fact: called at once, here.
  DownProbe late;
  (*c)->set_on_down(late.fn());
  CHECK(late.count() == 1);
  CHECK(late.thread == std::this_thread::get_id());
  CHECK(late.state == OobState::kClosed);
  CHECK((*c)->disconnect() == Errc::kClosed);
}

TEST_CASE("oob: a peer killed with SIGKILL is reported kPeerDead", "[oob]") {
  TempDir dir;
  const bool server_dies = GENERATE(true, false);
  INFO((server_dies ? "the accepting side dies" : "the connecting side dies"));
  std::shared_ptr<OobConnection> conn;
  std::unique_ptr<OobManager> mgr;
  std::unique_ptr<OobListener> listener;
  std::optional<Child> child;
  if (server_dies) {
    child.emplace([&](Child& self) { return accepting_server(self, dir, "srv", 7, 1); });
    REQUIRE(child->hear(Deadline::after(20s)) == "ready");
    auto m = OobManager::start(config(dir, "cli"));
    REQUIRE(m.ok());
    mgr = std::move(m).value();
    auto c = mgr->connect("srv", 7, {}, Deadline::after(20s));
    REQUIRE(c.ok());
    conn = c.value();
  } else {
    child.emplace([&](Child& self) {
      CHILD_CHECK(self.heard(Deadline::after(20s)) == "go");
      auto m = OobManager::start(config(dir, "cli"));
      CHILD_CHECK(m.ok());
      auto c = (*m)->connect("srv", 7, {}, Deadline::after(20s));
      CHILD_CHECK(c.ok());
      self.tell("connected");
      self.heard(Deadline::after(60s));
      return 0;
    });
    auto m = OobManager::start(config(dir, "srv"));
    REQUIRE(m.ok());
    mgr = std::move(m).value();
    auto l = mgr->listen(7);
    REQUIRE(l.ok());
    listener = std::move(l).value();
    child->say("go");
    auto req = listener->next_request(Deadline::after(20s));
    REQUIRE(req.ok());
    auto c = req->accept({});
    REQUIRE(c.ok());
    conn = c.value();
    REQUIRE(child->hear(Deadline::after(20s)) == "connected");
  }
  DownProbe probe;
  conn->set_on_down(probe.fn());
  CHECK(conn->state() == OobState::kConnected);
  auto t0 = Clock::now();
  child->signal(SIGKILL);
  REQUIRE(conn->wait_down(Deadline::after(10s)) == Errc::kOk);
  double dt = ms_since(t0);
  CHECK(conn->state() == OobState::kPeerDead);
  REQUIRE(probe.wait(Deadline::after(10s)));
  CHECK(probe.state == OobState::kPeerDead);
  WARN("SIGKILLed peer reported dead after " << dt << " ms (peer_timeout 1000 ms, pidfd watch)");
  CHECK(conn->disconnect() == Errc::kPeerDead);
  child->wait_exit(Deadline::after(10s));
}

TEST_CASE("oob: a SIGSTOPped peer on this host is not declared dead however long its silence", "[oob]") {
  TempDir dir;
  constexpr auto kHb = 50ms;
  constexpr auto kTimeout = 300ms;
  Child child([&](Child& self) { return accepting_server(self, dir, "srv", 7, 1, kHb, kTimeout); });
  REQUIRE(child.hear(Deadline::after(20s)) == "ready");
  auto mgr = OobManager::start(config(dir, "cli", kHb, kTimeout));
  REQUIRE(mgr.ok());
  auto c = (*mgr)->connect("srv", 7, {}, Deadline::after(20s));
  REQUIRE(c.ok());
  REQUIRE(child.hear(Deadline::after(20s)) == "accepted");
  child.stop();
  // Silent for many peer timeouts: its pidfd says it lives, so it is waited for.
  CHECK((*c)->wait_down(Deadline::after(10 * kTimeout)) == Errc::kTimeout);
  CHECK((*c)->state() == OobState::kConnected);
  child.signal(SIGCONT);
  child.say("done");  // it leaves in order: we see kClosed, not kPeerDead
  REQUIRE((*c)->wait_down(Deadline::after(20s)) == Errc::kOk);
  CHECK((*c)->state() == OobState::kClosed);
  CHECK(child.wait_exit(Deadline::after(20s)) == 0);
}

namespace {

// Takes node `name`'s lock in this process, as a node's manager would.
int hold_node_lock(const TempDir& dir, const std::string& name) {
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

}  // namespace

TEST_CASE("oob: a peer whose pid cannot be watched is declared dead after peer_timeout of silence", "[oob]") {
  using namespace oob_wire;
  TempDir dir;
  constexpr auto kHb = 50ms;
  constexpr auto kTimeout = 300ms;
  auto mgr = OobManager::start(config(dir, "srv", kHb, kTimeout));
  REQUIRE(mgr.ok());
  auto l = (*mgr)->listen(7);
  REQUIRE(l.ok());
  // A node of another pid namespace, spoken by hand: one CONNECT_REQ, then silence.
  int lock = hold_node_lock(dir, "far");
  REQUIRE(lock >= 0);
  zmq::context_t ctx;
  zmq::socket_t raw(ctx, zmq::socket_type::dealer);
  raw.set(zmq::sockopt::linger, 0);
  raw.connect("ipc://" + dir.path + "/srv.oob");
  Message req;
  req.hdr.type = MsgType::kConnectReq;
  req.hdr.node = "far";
  req.hdr.instance = 99;
  req.hdr.pid = ::getpid();
  req.hdr.pid_ns = 1;  // not ours: its pid means nothing here
  req.src_conn = 1;
  req.port = 7;
  raw.send(zmq::buffer(encode(req)), zmq::send_flags::none);
  auto r = (*l)->next_request(Deadline::after(20s));
  REQUIRE(r.ok());
  auto c = r->accept({});
  REQUIRE(c.ok());
  auto t0 = Clock::now();
  REQUIRE((*c)->wait_down(Deadline::after(20s)) == Errc::kOk);
  CHECK((*c)->state() == OobState::kPeerDead);
  CHECK(ms_since(t0) >= std::chrono::duration<double, std::milli>(kTimeout - 2 * kHb).count());
  ::close(lock);
}

TEST_CASE("oob: a forged REJECT naming a node whose request waits to be accepted introduces nobody",
          "[oob]") {
  using namespace oob_wire;
  TempDir dir;
  Child cli([&](Child& self) {
    auto m = OobManager::start(config(dir, "cli"));
    CHILD_CHECK(m.ok());
    CHILD_CHECK(self.heard(Deadline::after(60s)) == "listening");
    auto c = (*m)->connect("srv", 7, {}, Deadline::after(30s));
    CHILD_CHECK(c.ok());
    self.tell("connected");
    CHILD_CHECK(self.heard(Deadline::after(60s)) == "done");
    return 0;
  });
  auto mgr = OobManager::start(config(dir, "srv"));
  REQUIRE(mgr.ok());
  auto l = (*mgr)->listen(7);
  REQUIRE(l.ok());
  cli.say("listening");
  auto r = (*l)->next_request(Deadline::after(20s));
  REQUIRE(r.ok());

  // While the request waits, a raw socket claims that "cli" restarted and
  // answers a connect srv never made.
  zmq::context_t ctx;
  zmq::socket_t raw(ctx, zmq::socket_type::dealer);
  raw.set(zmq::sockopt::linger, 1000);
  raw.connect("ipc://" + dir.path + "/srv.oob");
  Message rej;
  rej.hdr.type = MsgType::kReject;
  rej.hdr.node = "cli";
  rej.hdr.instance = 12345;
  rej.hdr.pid = ::getpid();
  rej.dst_conn = 999;
  raw.send(zmq::buffer(encode(rej)), zmq::send_flags::none);
  auto deadline = Deadline::after(20s);
  auto judged = [&] { return (*mgr)->stats().forged_dropped + (*mgr)->stats().unknown_dropped; };
  while (judged() < 1 && !deadline.expired()) std::this_thread::yield();
  CHECK((*mgr)->stats().forged_dropped == 1);

  // The real node's request is still its own.
  auto c = r->accept({});
  REQUIRE(c.ok());
  CHECK(cli.hear(Deadline::after(20s)) == "connected");
  cli.say("done");
  CHECK(cli.wait_exit(Deadline::after(20s)) == 0);
}

TEST_CASE("oob: a forged HEARTBEAT naming a connected node with a new instance is dropped and counted",
          "[oob]") {
  using namespace oob_wire;
  TempDir dir;
  // A hostile process of the same user: it reads node names from the runtime
  // directory and speaks to the server's socket with a raw DEALER.
  Child forger([&](Child& self) {
    auto victim = self.heard(Deadline::after(30s));
    CHILD_CHECK(victim.has_value());
    zmq::context_t ctx;
    zmq::socket_t raw(ctx, zmq::socket_type::dealer);
    raw.set(zmq::sockopt::linger, 1000);
    raw.connect("ipc://" + dir.path + "/srv.oob");
    Message hb;
    hb.hdr.type = MsgType::kHeartbeat;
    hb.hdr.node = "cli";
    hb.hdr.instance = 12345;  // "cli restarted"
    hb.hdr.pid = std::stoi(*victim);
    raw.send(zmq::buffer(encode(hb)), zmq::send_flags::none);
    Message dc;  // and a DISCONNECT of its first connection
    dc.hdr = hb.hdr;
    dc.hdr.type = MsgType::kDisconnect;
    dc.dst_conn = 1;
    dc.src_conn = 1;
    raw.send(zmq::buffer(encode(dc)), zmq::send_flags::none);
    self.tell("sent");
    self.heard(Deadline::after(60s));
    return 0;
  });
  Child cli([&](Child& self) {
    auto m = OobManager::start(config(dir, "cli"));
    CHILD_CHECK(m.ok());
    CHILD_CHECK(self.heard(Deadline::after(60s)) == "listening");
    auto c = (*m)->connect("srv", 7, {}, Deadline::after(20s));
    CHILD_CHECK(c.ok());
    self.tell("connected");
    CHILD_CHECK(self.heard(Deadline::after(60s)) == "again");
    CHILD_CHECK((*c)->state() == OobState::kConnected);
    auto c2 = (*m)->connect("srv", 7, {}, Deadline::after(20s));  // its calls go on
    CHILD_CHECK(c2.ok());
    CHILD_CHECK((*c)->disconnect() == Errc::kOk);
    self.tell("closed");
    CHILD_CHECK(self.heard(Deadline::after(60s)) == "done");
    return 0;
  });
  auto mgr = OobManager::start(config(dir, "srv"));
  REQUIRE(mgr.ok());
  auto l = (*mgr)->listen(7);
  REQUIRE(l.ok());
  cli.say("listening");
  auto r = (*l)->next_request(Deadline::after(20s));
  REQUIRE(r.ok());
  auto c = r->accept({});
  REQUIRE(c.ok());
  REQUIRE(cli.hear(Deadline::after(20s)) == "connected");

  forger.say(std::to_string(cli.pid()));
  REQUIRE(forger.hear(Deadline::after(20s)) == "sent");
  // Both frames are read and judged: the counter says when.
  auto deadline = Deadline::after(20s);
  while ((*mgr)->stats().forged_dropped < 2 && !deadline.expired()) std::this_thread::yield();
  CHECK((*mgr)->stats().forged_dropped == 2);
  CHECK((*c)->state() == OobState::kConnected);

  cli.say("again");
  auto r2 = (*l)->next_request(Deadline::after(20s));
  REQUIRE(r2.ok());
  CHECK(r2->accept({}).ok());
  REQUIRE(cli.hear(Deadline::after(20s)) == "closed");
  // The orderly DISCONNECT of the real node is believed.
  REQUIRE((*c)->wait_down(Deadline::after(20s)) == Errc::kOk);
  CHECK((*c)->state() == OobState::kClosed);
  cli.say("done");
  CHECK(cli.wait_exit(Deadline::after(20s)) == 0);
  forger.say("done");
  CHECK(forger.wait_exit(Deadline::after(20s)) == 0);
}

TEST_CASE("oob: a node restarted under the same name is recognised while its old connection is open",
          "[oob]") {
  TempDir dir;
  auto client = [&](Child& self) {
    CHILD_CHECK(self.heard(Deadline::after(30s)) == "go");
    auto m = OobManager::start(config(dir, "cli"));
    CHILD_CHECK(m.ok());
    auto c = (*m)->connect("srv", 7, {}, Deadline::after(20s));
    CHILD_CHECK(c.ok());
    self.tell("connected");
    self.heard(Deadline::after(60s));
    return 0;
  };
  // Both forked before this process starts its manager's thread.
  Child first(client);
  Child second(client);
  auto mgr = OobManager::start(config(dir, "srv"));
  REQUIRE(mgr.ok());
  auto l = (*mgr)->listen(7);
  REQUIRE(l.ok());
  first.say("go");
  auto r = (*l)->next_request(Deadline::after(20s));
  REQUIRE(r.ok());
  auto c = r->accept({});
  REQUIRE(c.ok());
  REQUIRE(first.hear(Deadline::after(20s)) == "connected");
  first.kill_and_reap();
  second.say("go");
  auto r2 = (*l)->next_request(Deadline::after(20s));
  REQUIRE(r2.ok());
  auto c2 = r2->accept({});
  REQUIRE(c2.ok());
  REQUIRE(second.hear(Deadline::after(20s)) == "connected");
  REQUIRE((*c)->wait_down(Deadline::after(20s)) == Errc::kOk);
  CHECK((*c)->state() == OobState::kPeerDead);
  CHECK((*c2)->state() == OobState::kConnected);
  CHECK((*mgr)->stats().forged_dropped == 0);
}

TEST_CASE("siphash: the reference test vectors", "[oob]") {
  SipKey key{};
  for (uint8_t i = 0; i < 16; ++i) key[i] = i;
  std::vector<std::byte> msg;
  CHECK(siphash24(key, msg) == 0x726fdb47dd0e0e31ull);
  for (uint8_t i = 0; i < 15; ++i) msg.push_back(std::byte{i});
  CHECK(siphash24(key, msg) == 0xa129ca6149be45e5ull);
}

TEST_CASE("oob: a peer dying while our connect is pending gives kPeerDead", "[oob]") {
  TempDir dir;
  Child child([&](Child& self) {
    auto mgr = OobManager::start(config(dir, "srv"));
    CHILD_CHECK(mgr.ok());
    auto l = (*mgr)->listen(7);
    CHILD_CHECK(l.ok());
    self.tell("ready");
    auto req = (*l)->next_request(Deadline::after(20s));
    CHILD_CHECK(req.ok());
    self.tell("got it");
    self.heard(Deadline::after(60s));  // never answers
    return 0;
  });
  REQUIRE(child.hear(Deadline::after(20s)) == "ready");
  auto mgr = OobManager::start(config(dir, "cli"));
  REQUIRE(mgr.ok());
  auto fut = std::async(std::launch::async,
                        [&] { return (*mgr)->connect("srv", 7, {}, Deadline::after(20s)); });
  REQUIRE(child.hear(Deadline::after(20s)) == "got it");
  auto t0 = Clock::now();
  child.signal(SIGKILL);
  REQUIRE(fut.wait_for(20s) == std::future_status::ready);
  CHECK(fut.get().error() == Errc::kPeerDead);
  WARN("pending connect failed " << ms_since(t0) << " ms after the peer's death");
}

TEST_CASE("oob: node name held by a live process is kAddressInUse and reusable after it dies", "[oob]") {
  TempDir dir;
  Child holder([&](Child& self) {
    auto mgr = OobManager::start(config(dir, "dup"));
    CHILD_CHECK(mgr.ok());
    self.tell("ready");
    self.heard(Deadline::after(60s));
    return 0;
  });
  Child cli([&](Child& self) {
    CHILD_CHECK(self.heard(Deadline::after(30s)) == "go");
    auto m = OobManager::start(config(dir, "cli"));
    CHILD_CHECK(m.ok());
    auto c = (*m)->connect("dup", 1, pattern(5, 5), Deadline::after(20s));
    CHILD_CHECK(c.ok());
    return 0;
  });
  REQUIRE(holder.hear(Deadline::after(20s)) == "ready");
  CHECK(OobManager::start(config(dir, "dup")).error() == Errc::kAddressInUse);
  holder.kill_and_reap();
  auto again = OobManager::start(config(dir, "dup"));
  REQUIRE(again.ok());
  // And it really works under the reclaimed name.
  auto l = (*again)->listen(1);
  REQUIRE(l.ok());
  cli.say("go");
  auto req = (*l)->next_request(Deadline::after(20s));
  REQUIRE(req.ok());
  CHECK(req->peer_blob() == pattern(5, 5));
  CHECK(req->accept({}).ok());
  CHECK(cli.wait_exit(Deadline::after(20s)) == 0);
}

TEST_CASE("oob: garbage frames sent to the ROUTER are dropped and later connections work", "[oob]") {
  using namespace oob_wire;
  TempDir dir;
  Child cli([&](Child& self) {
    CHILD_CHECK(self.heard(Deadline::after(30s)) == "go");
    auto m = OobManager::start(config(dir, "cli"));
    CHILD_CHECK(m.ok());
    auto c = (*m)->connect("victim", 7, pattern(300, 9), Deadline::after(20s));
    CHILD_CHECK(c.ok());
    CHILD_CHECK((*c)->peer_blob() == pattern(77, 4));
    return 0;
  });
  auto mgr = OobManager::start(config(dir, "victim"));
  REQUIRE(mgr.ok());
  auto l = (*mgr)->listen(7);
  REQUIRE(l.ok());

  // A fake node "raw" whose lock we hold, so its valid request is taken and
  // serves as a marker: it is read after all the garbage sent before it.
  int raw_lock = ::open((dir.path + "/raw.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  REQUIRE(raw_lock >= 0);
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  REQUIRE(::fcntl(raw_lock, F_OFD_SETLK, &fl) == 0);

  zmq::context_t ctx;
  zmq::socket_t raw(ctx, zmq::socket_type::dealer);
  raw.set(zmq::sockopt::linger, 0);
  raw.connect("ipc://" + dir.path + "/victim.oob");
  auto send = [&](const std::vector<std::byte>& f) { raw.send(zmq::buffer(f), zmq::send_flags::none); };
  auto sendv = [&](std::initializer_list<int> bytes) {
    std::vector<std::byte> f;
    for (int b : bytes) f.push_back(std::byte(static_cast<uint8_t>(b)));
    send(f);
  };

  Message valid;
  valid.hdr.type = MsgType::kConnectReq;
  valid.hdr.node = "zzzzzz";  // not alive; far from "victim" in bit flips
  valid.hdr.instance = 77;
  valid.hdr.pid = 1;
  valid.src_conn = 5;
  valid.port = 7;
  valid.blob = pattern(40, 1);
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
  // The marker.
  Message marker = valid;
  marker.hdr.node = "raw";
  marker.blob = pattern(3, 3);
  send(encode(marker));

  auto req = (*l)->next_request(Deadline::after(20s));
  REQUIRE(req.ok());
  CHECK(req->peer_node() == "raw");
  CHECK(req->peer_blob() == pattern(3, 3));
  req->reject();
  auto st = (*mgr)->stats();
  CHECK(st.malformed_dropped >= expected_malformed);
  WARN("malformed dropped " << st.malformed_dropped << ", unknown dropped " << st.unknown_dropped
                            << ", peers " << st.peers);
  CHECK(st.peers <= 2);  // garbage from dead nodes allocates nothing

  // An oversize frame: ZeroMQ drops that sender (ZMQ_MAXMSGSIZE).
  zmq::socket_t big(ctx, zmq::socket_type::dealer);
  big.set(zmq::sockopt::linger, 0);
  big.connect("ipc://" + dir.path + "/victim.oob");
  big.send(zmq::buffer(std::vector<std::byte>(kMaxFrame + 1000)), zmq::send_flags::none);

  // Still serving.
  cli.say("go");
  auto r2 = (*l)->next_request(Deadline::after(20s));
  REQUIRE(r2.ok());
  CHECK(r2->peer_node() == "cli");
  CHECK(r2->peer_blob() == pattern(300, 9));
  CHECK(r2->accept(pattern(77, 4)).ok());
  CHECK(cli.wait_exit(Deadline::after(20s)) == 0);
  ::close(raw_lock);
}

TEST_CASE("oob: fifty connections between two processes", "[oob]") {
  TempDir dir;
  constexpr int kConns = 50;
  Child child([&](Child& self) {
    auto mgr = OobManager::start(config(dir, "srv"));
    CHILD_CHECK(mgr.ok());
    auto l = (*mgr)->listen(7);
    CHILD_CHECK(l.ok());
    self.tell("ready");
    std::vector<std::shared_ptr<OobConnection>> conns;
    for (int i = 0; i < kConns; ++i) {
      auto req = (*l)->next_request(Deadline::after(20s));
      CHILD_CHECK(req.ok());
      std::vector<std::byte> back(req->peer_blob().rbegin(), req->peer_blob().rend());
      auto c = req->accept(std::move(back));
      CHILD_CHECK(c.ok());
      conns.push_back(c.value());
    }
    for (auto& c : conns) {
      CHILD_CHECK(c->wait_down(Deadline::after(20s)) == Errc::kOk);
      CHILD_CHECK(c->state() == OobState::kClosed);
    }
    return 0;
  });
  REQUIRE(child.hear(Deadline::after(20s)) == "ready");
  auto mgr = OobManager::start(config(dir, "cli"));
  REQUIRE(mgr.ok());
  // From four threads at once, to exercise the command queue.
  std::vector<Result<std::shared_ptr<OobConnection>>> res(kConns, Errc::kSystem);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < kConns; i += 4) {
        res[i] = (*mgr)->connect("srv", 7, pattern(16, static_cast<uint8_t>(i)), Deadline::after(20s));
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<uint64_t> ids;
  for (int i = 0; i < kConns; ++i) {
    INFO("connection " << i);
    REQUIRE(res[i].ok());
    auto expect = pattern(16, static_cast<uint8_t>(i));
    std::reverse(expect.begin(), expect.end());
    CHECK((*res[i])->peer_blob() == expect);
    ids.insert((*res[i])->id());
  }
  CHECK(ids.size() == kConns);
  for (auto& r : res) CHECK((*r)->disconnect() == Errc::kOk);
  CHECK(child.wait_exit(Deadline::after(30s)) == 0);
}

TEST_CASE("oob: destroying a manager with open connections closes them for the peer", "[oob]") {
  TempDir dir;
  constexpr int kConns = 5;
  Child child([&](Child& self) {
    auto mgr = OobManager::start(config(dir, "srv"));
    CHILD_CHECK(mgr.ok());
    auto l = (*mgr)->listen(7);
    CHILD_CHECK(l.ok());
    self.tell("ready");
    std::vector<std::shared_ptr<OobConnection>> conns;
    std::vector<std::unique_ptr<DownProbe>> probes;
    for (int i = 0; i < kConns; ++i) {
      auto req = (*l)->next_request(Deadline::after(20s));
      CHILD_CHECK(req.ok());
      auto c = req->accept({});
      CHILD_CHECK(c.ok());
      conns.push_back(c.value());
      probes.push_back(std::make_unique<DownProbe>());
      conns.back()->set_on_down(probes.back()->fn());
    }
    CHILD_CHECK(self.heard(Deadline::after(20s)) == "destroy");
    mgr.value().reset();
    for (int i = 0; i < kConns; ++i) {
      CHILD_CHECK(conns[i]->state() == OobState::kLocalClosed);
      CHILD_CHECK(probes[i]->count() == 1);
      CHILD_CHECK(probes[i]->state == OobState::kLocalClosed);
      CHILD_CHECK(conns[i]->disconnect() == Errc::kClosed);
    }
    CHILD_CHECK((*l)->next_request(Deadline::after(1s)).error() == Errc::kClosed);
    CHILD_CHECK(!dir.has("srv.lock") && !dir.has("srv.oob"));
    return 0;
  });
  REQUIRE(child.hear(Deadline::after(20s)) == "ready");
  auto mgr = OobManager::start(config(dir, "cli"));
  REQUIRE(mgr.ok());
  std::vector<std::shared_ptr<OobConnection>> conns;
  for (int i = 0; i < kConns; ++i) {
    auto c = (*mgr)->connect("srv", 7, {}, Deadline::after(20s));
    REQUIRE(c.ok());
    conns.push_back(c.value());
  }
  child.say("destroy");
  for (auto& c : conns) {
    REQUIRE(c->wait_down(Deadline::after(10s)) == Errc::kOk);
    CHECK(c->state() == OobState::kClosed);  // orderly, not kPeerDead
  }
  CHECK(child.wait_exit(Deadline::after(20s)) == 0);
  CHECK((*mgr)->connect("srv", 7, {}, Deadline::after(5s)).error() == Errc::kRefused);
}

TEST_CASE("oob: to_string names every state", "[oob]") {
  CHECK(std::string(to_string(OobState::kConnected)) == "connected");
  CHECK(std::string(to_string(OobState::kClosed)) == "closed by peer");
  CHECK(std::string(to_string(OobState::kPeerDead)) == "peer dead");
  CHECK(std::string(to_string(OobState::kLocalClosed)) == "closed locally");
}

namespace {

// A child that holds node `name` until killed.
int holding_node(Child& self, const TempDir& dir, const std::string& name) {
  auto mgr = OobManager::start(config(dir, name));
  CHILD_CHECK(mgr.ok());
  self.tell("ready");
  self.heard(Deadline::after(60s));
  return 0;
}

// Leaves behind the files of node `name`, as a process killed while holding it does.
void leave_killed_node(const TempDir& dir, const std::string& name) {
  Child holder([&](Child& self) { return holding_node(self, dir, name); });
  REQUIRE(holder.hear(Deadline::after(20s)) == "ready");
  holder.kill_and_reap();
}

}  // namespace

TEST_CASE("oob: a starting node removes the files of killed nodes and leaves live ones", "[oob]") {
  TempDir dir;
  // All up before any dies: each start sweeps what is dead by then.
  Child dead1([&](Child& self) { return holding_node(self, dir, "dead1"); });
  Child dead2([&](Child& self) { return holding_node(self, dir, "dead2"); });
  Child live([&](Child& self) { return accepting_server(self, dir, "live", 7, 1); });
  for (Child* c : {&dead1, &dead2, &live}) REQUIRE(c->hear(Deadline::after(20s)) == "ready");
  dead1.kill_and_reap();
  dead2.kill_and_reap();
  for (const char* f : {"dead1.lock", "dead1.oob", "dead2.lock", "dead2.oob"}) CHECK(dir.has(f));

  auto mgr = OobManager::start(config(dir, "fresh"));
  REQUIRE(mgr.ok());
  for (const char* f : {"dead1.lock", "dead1.oob", "dead2.lock", "dead2.oob"}) {
    INFO(f);
    CHECK_FALSE(dir.has(f));
  }
  CHECK(dir.has("live.lock"));
  CHECK(dir.has("live.oob"));
  CHECK(dir.has("fresh.lock"));
  CHECK((*mgr)->connect("live", 7, {}, Deadline::after(20s)).ok());
  REQUIRE(live.hear(Deadline::after(20s)) == "accepted");
  live.say("done");
  CHECK(live.wait_exit(Deadline::after(20s)) == 0);
}

TEST_CASE("oob: a node starting under a dead node's name while another node sweeps it keeps the name",
          "[oob]") {
  TempDir dir;
  constexpr int kRounds = 30;
  for (int round = 0; round < kRounds; ++round) {
    INFO("round " << round);
    leave_killed_node(dir, "name");
    REQUIRE(dir.has("name.lock"));
    // Both start at the word "go": one takes the name, the other sweeps it.
    auto at_go = [&dir](std::string node) {
      return [&dir, node](Child& self) {
        CHILD_CHECK(self.heard(Deadline::after(30s)) == "go");
        return accepting_server(self, dir, node, 7, 1);
      };
    };
    Child owner(at_go("name")), sweeper(at_go("other" + std::to_string(round)));
    owner.say("go");
    sweeper.say("go");
    REQUIRE(owner.hear(Deadline::after(20s)) == "ready");
    REQUIRE(sweeper.hear(Deadline::after(20s)) == "ready");
    // The name's files are the owner's: it is reachable through them.
    CHECK(dir.has("name.lock"));
    CHECK(dir.has("name.oob"));
    auto mgr = OobManager::start(config(dir, "probe"));
    REQUIRE(mgr.ok());
    CHECK((*mgr)->connect("name", 7, {}, Deadline::after(20s)).ok());
  }
}
