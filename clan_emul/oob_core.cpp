#include "clan_emul/oob_core.hpp"

#include "clan_emul/decimal.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/oob_sweep.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

namespace clan::oob_detail {

using oob_wire::Message;
using oob_wire::MsgType;
using oob_wire::RejectReason;

namespace {

constexpr int kShutdownLingerMs = 100;  // lets DISCONNECTs leave at shutdown, bounded
constexpr int kSndHwm = 1000;           // messages queued per peer before we drop
constexpr int kRcvHwm = 10000;
constexpr int kRouterBurst = 256;       // messages read per poll round (fairness with timers)
constexpr auto kIdlePeerGrace = std::chrono::seconds(3);  // a peer without connections is forgotten
constexpr auto kEvictableAfter = std::chrono::seconds(1);  // idle this long: may make room in a full table
constexpr std::size_t kSunPathMax = 107;

// ---- fork: the child must not keep the parent's node name locked. ----
std::mutex g_reg_mu;
std::vector<Core*>& registry() {
  // Never destroyed: a manager owned by another static object may be
  // destroyed (and unregister) after this file's statics are gone.
  static auto* r = new std::vector<Core*>;
  return *r;
}
void atfork_prepare() { g_reg_mu.lock(); }
void atfork_parent() { g_reg_mu.unlock(); }
void atfork_child() {
  // Only close(): async-signal-safe. The parent's OFD lock stays held by the parent.
  for (Core* c : registry()) {
    if (c->lock_fd_ >= 0) ::close(c->lock_fd_);
    c->lock_fd_ = -1;
  }
  g_reg_mu.unlock();
}
void register_core(Core* c) {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(atfork_prepare, atfork_parent, atfork_child); });
  std::lock_guard g(g_reg_mu);
  registry().push_back(c);
}
void unregister_core(Core* c) {
  std::lock_guard g(g_reg_mu);
  auto& r = registry();
  r.erase(std::remove(r.begin(), r.end(), c), r.end());
}

// ---- host identity ----
oob_wire::BootId read_boot_id() {
  oob_wire::BootId id{};
  FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "re");
  if (!f) return id;
  char buf[64] = {};
  std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  std::size_t out = 0;
  int half = -1;
  for (std::size_t i = 0; i < n && out < id.size(); ++i) {
    char c = buf[i];
    int v = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
    if (v < 0) continue;
    if (half < 0) {
      half = v;
    } else {
      id[out++] = static_cast<uint8_t>(half << 4 | v);
      half = -1;
    }
  }
  if (out != id.size()) id = {};
  return id;
}
bool boot_id_known(const oob_wire::BootId& b) {
  return std::any_of(b.begin(), b.end(), [](uint8_t x) { return x != 0; });
}
uint64_t read_pid_ns() {
  struct stat st {};
  if (::stat("/proc/self/ns/pid", &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_ino);
}
uint64_t random_instance() {
  std::random_device rd;
  uint64_t v = 0;
  while (v == 0) {
    v = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ now_ns() ^ static_cast<uint64_t>(::getpid());
  }
  return v;
}
int pidfd_open_(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }
// A pidfd is readable once its process has exited.
bool pidfd_fired(int pidfd) {
  pollfd p{pidfd, POLLIN, 0};
  return pidfd >= 0 && ::poll(&p, 1, 0) > 0;
}
Errc random_secret(SipKey& key) {
  if (::getrandom(key.data(), key.size(), 0) != static_cast<ssize_t>(key.size())) {
    return set_error(Errc::kSystem, errno, "cannot draw the node's secret: getrandom");
  }
  return Errc::kOk;
}

std::string lock_path(const std::string& dir, const std::string& node) { return dir + "/" + node + ".lock"; }
std::string sock_path(const std::string& dir, const std::string& node) { return dir + "/" + node + ".oob"; }

Errc ensure_dir(const std::string& dir, bool must_own) {
  if (dir.empty()) return set_error(Errc::kInvalidArgument, 0, "the runtime directory is empty");
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return set_error(Errc::kSystem, errno, "cannot create the runtime directory '%s': mkdir", dir.c_str());
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return set_error(Errc::kSystem, errno, "cannot use the runtime directory '%s': stat", dir.c_str());
  }
  if (!S_ISDIR(st.st_mode)) {
    return set_error(Errc::kInvalidArgument, 0, "the runtime directory '%s' exists and is not a directory",
                     dir.c_str());
  }
  // The default lives in shared /tmp: refuse a directory planted by someone else.
  if (must_own && st.st_uid != ::getuid()) {
    return set_error(Errc::kNotPermitted, 0,
                     "the runtime directory '%s' belongs to uid %u, not to this user (uid %u)",
                     dir.c_str(), static_cast<unsigned>(st.st_uid), static_cast<unsigned>(::getuid()));
  }
  return Errc::kOk;
}

// Whether a manager of this process holds the lock file at `path`.
bool locked_in_this_process(const std::string& path) {
  struct stat want {};
  if (::stat(path.c_str(), &want) != 0) return false;
  std::lock_guard g(g_reg_mu);
  return std::any_of(registry().begin(), registry().end(), [&](const Core* c) {
    struct stat st {};
    return c->lock_fd_ >= 0 && ::fstat(c->lock_fd_, &st) == 0 && st.st_dev == want.st_dev &&
           st.st_ino == want.st_ino;
  });
}

Errc name_in_use(const std::string& node, const std::string& path) {
  if (locked_in_this_process(path)) {
    return set_error(Errc::kAddressInUse, 0, "node name '%s' is already taken by this process (lock '%s')",
                     node.c_str(), path.c_str());
  }
  return set_error(Errc::kAddressInUse, 0, "node name '%s' is in use by another process (lock '%s' is held)",
                   node.c_str(), path.c_str());
}

bool names_file(const std::string& path, int fd) {
  struct stat a {}, b {};
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// Takes the lock, or sees the file leave the path: a node sweeping a dead
// holder's files (oob_sweep.hpp) holds the lock only while it unlinks them.
// 0 locked, -1 the file left the path, else the lock's errno.
// A sweeper holds the lock for two unlinks, but may be preempted meanwhile
// on a loaded host: the grace is generous, and costs only a name truly in
// use that long before it is reported.
int lock_or_see_swept(int fd, const std::string& path) {
  constexpr auto kSweepGrace = std::chrono::milliseconds(250);
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  const Deadline grace = Deadline::after(kSweepGrace);
  for (;;) {
    if (::fcntl(fd, F_OFD_SETLK, &fl) == 0) return 0;
    int e = errno;
    if (e != EAGAIN && e != EACCES) return e;
    if (!names_file(path, fd)) return -1;
    if (grace.expired()) return e;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Takes the node's OFD lock; returns the descriptor that holds it.
Result<int> acquire_lock(const std::string& node, const std::string& path) {
  // Each retry follows a sweep that removed the file: sweepers are few.
  for (int attempt = 0; attempt < 64; ++attempt) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return set_error(Errc::kSystem, errno, "cannot create the lock file '%s': open", path.c_str());
    int e = lock_or_see_swept(fd, path);
    // The previous holder (or a sweeper) unlinks the file before releasing
    // it: make sure we locked the file that is at the path now.
    if (e == 0 && names_file(path, fd)) return fd;
    ::close(fd);
    if (e == EAGAIN || e == EACCES) return name_in_use(node, path);
    if (e > 0) return set_error(Errc::kSystem, e, "cannot lock '%s': fcntl(F_OFD_SETLK)", path.c_str());
  }
  return set_error(Errc::kAddressInUse, 0, "node name lock '%s' changed hands 64 times while taking it",
                   path.c_str());
}

}  // namespace

std::string default_runtime_dir() {
  if (const char* e = std::getenv("CLAN_RUNTIME_DIR"); e && *e) return e;
  return "/tmp/clanorb-" + std::to_string(::getuid());
}

bool node_alive(const std::string& dir, const std::string& node) {
  int fd = ::open(lock_path(dir, node).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  struct flock fl {};
  fl.l_type = F_RDLCK;  // conflicts with the holder's write lock
  fl.l_whence = SEEK_SET;
  bool alive = ::fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
  ::close(fd);
  return alive;
}

// ===================== ConnShared =====================

bool ConnShared::leave(OobState to) {
  OobState expected = OobState::kConnected;
  if (!state.compare_exchange_strong(expected, to, std::memory_order_acq_rel)) return false;
  { std::lock_guard g(wait_mu_); }  // a waiter between its check and its sleep sees the change
  wait_cv_.notify_all();
  return true;
}

void ConnShared::notify_down() {
  std::lock_guard g(cb_mu_);
  if (notified_) return;
  notified_ = true;
  // Moved out first: the callback may destroy the connection (and this slot).
  auto fn = std::move(on_down_);
  on_down_ = nullptr;
  if (fn) {
    try {
      fn(state.load(std::memory_order_acquire));
    } catch (...) {
      // A throwing callback must not kill the manager thread.
    }
  }
}

void ConnShared::set_on_down(std::function<void(OobState)> fn) {
  std::unique_lock g(cb_mu_);
  // Already down (reported or not yet): call it here, and the manager's later
  // notify_down() finds notified_ set. Otherwise the manager calls it, under cb_mu_.
  if (notified_ || state.load(std::memory_order_acquire) != OobState::kConnected) {
    notified_ = true;
    on_down_ = nullptr;
    g.unlock();
    if (fn) fn(state.load(std::memory_order_acquire));
    return;
  }
  on_down_ = std::move(fn);
}

void ConnShared::forget_on_down() {
  std::lock_guard g(cb_mu_);  // waits for a callback running on another thread
  on_down_ = nullptr;
}

Errc ConnShared::wait_down(Deadline d) {
  std::unique_lock g(wait_mu_);
  auto down = [this] { return state.load(std::memory_order_acquire) != OobState::kConnected; };
  if (d.is_never()) {
    wait_cv_.wait(g, down);
    return Errc::kOk;
  }
  return wait_cv_.wait_until(g, d.when(), down) ? Errc::kOk : Errc::kTimeout;
}

// ===================== Core: start / stop =====================

Core::Core(OobConfig cfg) : cfg_(std::move(cfg)) {}

namespace {

constexpr uint64_t kMaxPeerTimeoutMs = 24ull * 3600 * 1000;

// $CLAN_PEER_TIMEOUT_MS overrides the configured timeout; empty is unset.
Errc apply_peer_timeout_env(OobConfig& cfg) {
  const char* text = std::getenv("CLAN_PEER_TIMEOUT_MS");
  if (!text || !*text) return Errc::kOk;
  const ParsedValue v = parse_decimal(text);
  // Above the heartbeat interval: a peer must have the chance to be heard.
  const auto least = static_cast<uint64_t>(cfg.heartbeat_interval.count()) + 1;
  if (v.problem != ValueProblem::kNone || v.value < least || v.value > kMaxPeerTimeoutMs) {
    return set_error(Errc::kInvalidArgument, 0,
                     "CLAN_PEER_TIMEOUT_MS='%s' %s; it takes %llu to %llu milliseconds, in decimal digits",
                     text, v.problem != ValueProblem::kNone ? describe(v.problem) : "is out of range",
                     static_cast<unsigned long long>(least), static_cast<unsigned long long>(kMaxPeerTimeoutMs));
  }
  cfg.peer_timeout = std::chrono::milliseconds(v.value);
  return Errc::kOk;
}

Errc check_config(const OobConfig& cfg) {
  if (!oob_wire::valid_node_name(cfg.node)) {
    return set_error(Errc::kInvalidArgument, 0,
                     "'%s' is not a node name (1 to %zu characters of A-Z a-z 0-9 . _ -, not '.' or '..')",
                     cfg.node.c_str(), oob_wire::kMaxNodeName);
  }
  if (cfg.heartbeat_interval.count() <= 0 || cfg.peer_timeout <= cfg.heartbeat_interval) {
    return set_error(Errc::kInvalidArgument, 0,
                     "the heartbeat interval (%lld ms) must be positive and below the peer timeout (%lld ms)",
                     static_cast<long long>(cfg.heartbeat_interval.count()),
                     static_cast<long long>(cfg.peer_timeout.count()));
  }
  if (std::string sock = sock_path(cfg.runtime_dir, cfg.node); sock.size() > kSunPathMax) {
    return set_error(Errc::kInvalidArgument, 0,
                     "the socket path '%s' is %zu characters, above the %zu a unix socket allows "
                     "(choose a shorter runtime directory)",
                     sock.c_str(), sock.size(), kSunPathMax);
  }
  return Errc::kOk;
}

}  // namespace

Result<std::shared_ptr<Core>> Core::start(OobConfig cfg) {
  clear_error();
  bool must_own = false;
  if (cfg.runtime_dir.empty()) {
    cfg.runtime_dir = default_runtime_dir();
    must_own = true;
  }
  while (cfg.runtime_dir.size() > 1 && cfg.runtime_dir.back() == '/') cfg.runtime_dir.pop_back();
  if (Errc e = apply_peer_timeout_env(cfg); e != Errc::kOk) return e;
  if (Errc e = check_config(cfg); e != Errc::kOk) return e;
  if (Errc e = ensure_dir(cfg.runtime_dir, must_own); e != Errc::kOk) return e;

  std::shared_ptr<Core> c(new Core(std::move(cfg)));
  c->owner_pid_ = ::getpid();
  c->instance_ = random_instance();
  if (Errc e = random_secret(c->secret_); e != Errc::kOk) return e;
  c->boot_id_ = read_boot_id();
  c->pid_ns_ = read_pid_ns();
  c->lock_path_ = lock_path(c->cfg_.runtime_dir, c->cfg_.node);
  c->sock_path_ = sock_path(c->cfg_.runtime_dir, c->cfg_.node);

  auto lock = acquire_lock(c->cfg_.node, c->lock_path_);
  if (!lock) return lock.error();
  c->lock_fd_ = lock.value();
  register_core(c.get());  // from here on ~Core releases the lock
  sweep_stale_nodes(c->cfg_.runtime_dir, c->cfg_.node);
  c->stopped_ = true;      // nothing to stop until the thread runs

  c->wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (c->wake_fd_ < 0) return set_error(Errc::kSystem, errno, "cannot create the manager's wake-up: eventfd");
  if (Errc e = c->bind_router(); e != Errc::kOk) return e;
  c->stopped_ = false;
  try {
    c->thread_ = std::thread([raw = c.get()] { raw->run_mt(); });
  } catch (const std::system_error& ex) {
    c->stopped_ = true;
    c->router_.reset();
    c->ctx_.reset();
    return set_error(Errc::kSystem, ex.code().value(), "cannot start the manager thread");
  }
  return c;
}

Errc Core::bind_router() {
  // We hold the name, so a leftover socket file is a dead holder's: reclaim it.
  ::unlink(sock_path_.c_str());
  try {
    ctx_.emplace();
    ctx_->set(zmq::ctxopt::io_threads, 1);
    ctx_->set(zmq::ctxopt::blocky, false);
    router_.emplace(*ctx_, zmq::socket_type::router);
    router_->set(zmq::sockopt::linger, 0);
    router_->set(zmq::sockopt::rcvhwm, kRcvHwm);
    // Larger frames cannot be valid: ZeroMQ drops the sender's pipe.
    router_->set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(oob_wire::kMaxFrame));
    router_->bind("ipc://" + sock_path_);
  } catch (const zmq::error_t& ex) {
    router_.reset();
    ctx_.reset();
    // zmq_strerror (what()) also knows ZeroMQ's own error numbers.
    return set_error(Errc::kSystem, 0, "cannot listen on the socket 'ipc://%s': ZeroMQ: %s (errno %d)",
                     sock_path_.c_str(), ex.what(), ex.num());
  }
  return Errc::kOk;
}

Core::~Core() {
  if (!in_owner_process()) return;  // not reached in practice: children leak the Core
  stop();
  release_name();  // when start() failed before the thread ran
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void Core::stop() {
  if (stopped_) return;
  {
    std::lock_guard g(q_mu_);
    stopping_ = true;
    uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
  }
  if (thread_.joinable()) thread_.join();
  stopped_ = true;
  release_name();  // now, rather than when the last user object goes
}

void Core::release_name() {
  unregister_core(this);
  if (lock_fd_ < 0) return;
  // Unlink while still holding the lock: whoever locks the path next gets a new file.
  ::unlink(sock_path_.c_str());
  ::unlink(lock_path_.c_str());
  ::close(lock_fd_);
  lock_fd_ = -1;
}

bool Core::in_owner_process() const { return ::getpid() == owner_pid_; }

OobStats Core::stats() const {
  OobStats s;
  s.malformed_dropped = malformed_.load(std::memory_order_relaxed);
  s.unknown_dropped = unknown_.load(std::memory_order_relaxed);
  s.forged_dropped = forged_.load(std::memory_order_relaxed);
  s.send_dropped = send_dropped_.load(std::memory_order_relaxed);
  s.peers = peers_.load(std::memory_order_relaxed);
  return s;
}

bool Core::post(std::function<void()> fn) {
  std::lock_guard g(q_mu_);
  if (stopping_) return false;
  queue_.push_back(std::move(fn));
  uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);  // EAGAIN only if already signalled
  return true;
}

template <class R>
R Core::call(std::function<R()> fn, R if_stopped) {
  // From the manager thread itself (an on_down callback): run inline, never wait on ourselves.
  if (std::this_thread::get_id() == thread_id_.load()) return fn();
  auto p = std::make_shared<std::promise<R>>();
  auto f = p->get_future();
  if (!post([p, fn = std::move(fn)] { p->set_value(fn()); })) return if_stopped;
  return f.get();
}

// ===================== Core: user-thread API =====================

Result<std::shared_ptr<ListenerShared>> Core::listen(uint16_t port) {
  using R = Result<std::shared_ptr<ListenerShared>>;
  if (!in_owner_process()) return Errc::kInvalidArgument;
  R r = call<R>(
      [this, port]() -> R {
        if (torn_down_) return Errc::kClosed;
        if (listeners_.count(port)) return Errc::kAddressInUse;
        auto l = std::make_shared<ListenerShared>();
        l->port = port;
        listeners_.emplace(port, l);
        return l;
      },
      Errc::kClosed);
  // In words on the caller's thread (the check ran on the manager's).
  if (r.error() == Errc::kAddressInUse) {
    set_error(Errc::kAddressInUse, 0, "node '%s' already listens on port %u", cfg_.node.c_str(), port);
  } else if (r.error() == Errc::kClosed) {
    set_error(Errc::kClosed, 0, "node '%s' has stopped", cfg_.node.c_str());
  }
  return r;
}

void Core::unlisten(std::shared_ptr<ListenerShared> l) {
  if (!in_owner_process()) return;
  // If the manager already stopped, teardown closed the listener.
  post([this, l] {
    auto it = listeners_.find(l->port);
    if (it != listeners_.end() && it->second == l) listeners_.erase(it);
    close_listener_mt(*l);
  });
}

ConnResult Core::connect(const std::string& node, uint16_t port, std::vector<std::byte> blob,
                         Deadline deadline) {
  clear_error();
  if (!in_owner_process()) {
    return set_error(Errc::kInvalidArgument, 0, "this OOB manager belongs to the process that forked this one");
  }
  if (!oob_wire::valid_node_name(node)) {
    return set_error(Errc::kInvalidArgument, 0, "'%s' is not a node name", node.c_str());
  }
  if (blob.size() > oob_wire::kMaxBlob || sock_path(cfg_.runtime_dir, node).size() > kSunPathMax) {
    return set_error(Errc::kInvalidArgument, 0, "connect to node '%s': blob or socket path too long", node.c_str());
  }
  // The manager thread answers the connect: waiting for it there would deadlock.
  if (std::this_thread::get_id() == thread_id_.load()) return Errc::kWouldBlock;
  if (!node_alive(cfg_.runtime_dir, node)) {
    return set_error(Errc::kRefused, 0, "no node '%s' is running in the runtime directory '%s'", node.c_str(),
                     cfg_.runtime_dir.c_str());
  }
  auto p = std::make_shared<std::promise<ConnResult>>();
  auto f = p->get_future();
  auto b = std::make_shared<std::vector<std::byte>>(std::move(blob));
  if (!post([this, p, b, node, port, deadline] {
        start_connect_mt(node, port, std::move(*b), deadline, std::move(*p));
      })) {
    return set_error(Errc::kClosed, 0, "this node's OOB manager has stopped");
  }
  // The manager thread always answers: by the deadline, on peer death, or at stop.
  ConnResult r = f.get();
  if (!r) describe_connect_failure(r.error(), node, port);
  return r;
}

// In words, on the caller's thread, what the manager thread answered.
void Core::describe_connect_failure(Errc e, const std::string& node, uint16_t port) const {
  const char* n = node.c_str();
  switch (e) {
    case Errc::kRefused:
      set_error(e, 0, "node '%s' refused the connection to port %u (nobody listens there, or too many "
                "requests wait)", n, port);
      break;
    case Errc::kTimeout: set_error(e, 0, "node '%s' did not answer on port %u in time", n, port); break;
    case Errc::kPeerDead: set_error(e, 0, "node '%s' died before it answered", n); break;
    case Errc::kNoResources:
      set_error(e, 0, "cannot send to node '%s' (too many peers, or its queue is full)", n);
      break;
    case Errc::kClosed: set_error(e, 0, "this node's OOB manager stopped during the connect"); break;
    default: break;
  }
}

ConnResult Core::accept(PendingRequest req, std::vector<std::byte> blob) {
  if (!in_owner_process() || blob.size() > oob_wire::kMaxBlob) return Errc::kInvalidArgument;
  return call<ConnResult>([&]() -> ConnResult { return accept_mt(req, std::move(blob)); },
                          Errc::kClosed);
}

void Core::reject(PendingRequest req) {
  if (!in_owner_process()) return;
  auto r = std::make_shared<PendingRequest>(std::move(req));
  post([this, r] { reject_mt(*r, RejectReason::kRejected); });
}

void Core::local_disconnect(std::shared_ptr<ConnShared> c) {
  if (!in_owner_process()) return;
  // If posting fails the manager is stopping and its teardown still holds c.
  post([this, c] {
    if (auto it = nodes_.find(c->peer_node); it != nodes_.end()) {
      PeerNode& n = it->second;
      auto ci = n.conns.find(c->id);
      if (ci != n.conns.end() && ci->second == c) {
        n.conns.erase(ci);
        if (n.alive) send_disconnect_mt(n, *c);
      }
    }
    c->notify_down();
  });
}

// ===================== Core: manager thread =====================

void Core::run_mt() {
  thread_id_.store(std::this_thread::get_id());
  next_heartbeat_ = Clock::now() + cfg_.heartbeat_interval;
  std::vector<zmq_pollitem_t> items;
  std::vector<std::string> pid_watch;  // node name for items[2 + i]
  for (;;) {
    bool stop;
    {
      std::lock_guard g(q_mu_);
      stop = stopping_;
    }
    run_commands_mt();  // after seeing stopping_: every accepted command runs
    if (stop) break;

    items.clear();
    pid_watch.clear();
    items.push_back({router_->handle(), 0, ZMQ_POLLIN, 0});
    items.push_back({nullptr, wake_fd_, ZMQ_POLLIN, 0});
    for (auto& [name, n] : nodes_) {
      if (n.pidfd >= 0) {
        items.push_back({nullptr, n.pidfd, ZMQ_POLLIN, 0});
        pid_watch.push_back(name);
      }
    }
    int rc = zmq_poll(items.data(), static_cast<int>(items.size()),
                      poll_timeout_ms_mt(Clock::now()));
    if (rc < 0 && zmq_errno() != EINTR) {
      // Should not happen; don't spin if it does.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (rc > 0) {
      if (items[1].revents) {
        uint64_t v;
        [[maybe_unused]] auto n = ::read(wake_fd_, &v, sizeof v);
      }
      if (items[0].revents) read_router_mt();
      for (std::size_t i = 2; i < items.size(); ++i) {
        if (!items[i].revents) continue;
        // The peer process exited (pidfd readable). Reading the router may
        // have replaced a restarted node's pidfd by one of the same number:
        // ask the descriptor it holds now.
        if (auto it = nodes_.find(pid_watch[i - 2]);
            it != nodes_.end() && it->second.pidfd == items[i].fd && pidfd_fired(it->second.pidfd)) {
          node_died_mt(it->second);
        }
      }
    }
    on_timer_mt(Clock::now());
  }
  teardown_mt();
}

void Core::run_commands_mt() {
  std::deque<std::function<void()>> cmds;
  {
    std::lock_guard g(q_mu_);
    cmds.swap(queue_);
  }
  for (auto& cmd : cmds) {
    try {
      cmd();
    } catch (...) {
      // bad_alloc or a user callback: keep the manager alive.
    }
  }
}

void Core::read_router_mt() {
  for (int i = 0; i < kRouterBurst; ++i) {
    try {
      zmq::message_t id;
      if (!router_->recv(id, zmq::recv_flags::dontwait)) return;
      int parts = 1;
      zmq::message_t payload;
      bool more = id.more();
      while (more) {
        zmq::message_t part;
        if (!router_->recv(part, zmq::recv_flags::dontwait)) break;
        more = part.more();
        if (++parts == 2) payload = std::move(part);
      }
      if (parts != 2) {
        malformed_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      auto m = oob_wire::decode({payload.data<std::byte>(), payload.size()});
      if (!m) {
        malformed_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      dispatch_mt(*m);
    } catch (const zmq::error_t&) {
      return;
    }
  }
}

void Core::dispatch_mt(const Message& m) {
  using Handler = void (Core::*)(const Message&);
  static constexpr std::array<Handler, oob_wire::kMaxMsgType + 1> kHandlers = {
      nullptr,                   // 0: never valid
      &Core::on_connect_req_mt,  // kConnectReq
      &Core::on_accept_mt,       // kAccept
      &Core::on_reject_mt,       // kReject
      &Core::on_disconnect_mt,   // kDisconnect
      &Core::on_heartbeat_mt,    // kHeartbeat
  };
  auto t = static_cast<std::size_t>(m.hdr.type);
  if (t >= kHandlers.size() || kHandlers[t] == nullptr) {
    malformed_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  (this->*kHandlers[t])(m);
}

Core::PeerNode* Core::get_node_mt(const std::string& name, bool create) {
  if (auto it = nodes_.find(name); it != nodes_.end()) return &it->second;
  if (!create) return nullptr;
  if (nodes_.size() >= kMaxPeers && !evict_idle_node_mt()) return nullptr;
  PeerNode& n = nodes_[name];
  n.name = name;
  n.our_token = token_for(name);
  n.last_used = Clock::now();
  peers_.store(nodes_.size(), std::memory_order_relaxed);
  return &n;
}

// Every believed message is proof of life of its sender's incarnation.
Core::PeerNode* Core::observe_mt(const oob_wire::Header& h, bool introduces) {
  PeerNode* n = get_node_mt(h.node, false);
  if (!n) {
    // Only for replies we owe: never allocate for a node that is not alive.
    if (!introduces || !node_alive(cfg_.runtime_dir, h.node) || !(n = get_node_mt(h.node, true))) {
      unknown_.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
  }
  if (!believed_mt(*n, h, introduces)) {
    forged_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  auto now = Clock::now();
  n->last_rx = now;
  n->last_used = now;
  return n;
}

// The incarnation we know speaks with its token. Anything else naming the node
// is believed only from a handshake, and only if it cannot cost the one we
// know anything it has (a frame anybody could send must not cut it off).
bool Core::believed_mt(PeerNode& n, const oob_wire::Header& h, bool introduces) {
  if (n.instance != 0 && h.instance == n.instance) {
    if (h.token != n.token) return false;
    if (!n.alive) node_alive_mt(n, h);  // declared dead by silence, but it was only stopped
    return true;
  }
  if (!introduces || !may_replace_mt(n)) return false;
  node_alive_mt(n, h);
  return true;
}

// Whether a new incarnation of `n` may take the place of the one we know: on
// evidence about that one itself (its process exited, or it was declared dead
// by its own channel or silence), or when it holds no connection with us.
bool Core::may_replace_mt(PeerNode& n) {
  if (n.instance == 0 || !n.alive) return true;
  if (pidfd_fired(n.pidfd)) {
    node_died_mt(n);  // restarted before we read its pidfd
    return true;
  }
  return n.conns.empty() && n.pending_connects == 0;
}

oob_wire::Token Core::token_for(const std::string& peer) const {
  oob_wire::Token t{};
  for (uint8_t half = 0; half < 2; ++half) {
    std::string msg = static_cast<char>(half) + peer;
    uint64_t v = siphash24(secret_, std::as_bytes(std::span(msg)));
    for (int i = 0; i < 8; ++i) t[8 * half + i] = static_cast<uint8_t>(v >> (8 * i));
  }
  return t;
}

void Core::node_alive_mt(PeerNode& n, const oob_wire::Header& h) {
  n.instance = h.instance;
  n.token = h.token;
  n.alive = true;
  n.pid = h.pid;
  n.same_host = boot_id_known(boot_id_) && h.boot_id == boot_id_;
  // A pid means something only in our pid namespace (containers share boot ids).
  n.watch_pid = n.same_host && pid_ns_ != 0 && h.pid_ns == pid_ns_;
  if (n.pidfd >= 0) ::close(n.pidfd);
  n.pidfd = -1;
  // ESRCH here is not proof of death (pid namespaces); heartbeats decide then.
  if (n.watch_pid) n.pidfd = pidfd_open_(n.pid);
  n.last_rx = Clock::now();
}

void Core::node_died_mt(PeerNode& n) {
  auto conns = std::move(n.conns);
  n.conns.clear();
  n.alive = false;
  if (n.pidfd >= 0) ::close(n.pidfd);
  n.pidfd = -1;
  std::vector<uint64_t> pend;
  for (auto& [id, p] : pending_) {
    if (p.node == n.name) pend.push_back(id);
  }
  for (uint64_t id : pend) finish_pending_mt(id, Errc::kPeerDead);
  // Callbacks last: they may call back into the manager.
  for (auto& [id, c] : conns) {
    c->leave(OobState::kPeerDead);
    c->notify_down();
  }
}

// Forgets idle peers (their DEALERs keep reconnecting otherwise) as soon as
// their node is gone (lock released), else after kIdlePeerGrace whatever the
// peer timeout: a server with churning clients must not hold a record and a
// socket per client gone.
void Core::forget_idle_nodes_mt(Clock::time_point now) {
  std::vector<std::string> names;
  for (auto& [name, n] : nodes_) {
    if (!n.conns.empty() || n.pending_connects != 0) continue;
    if (now - n.last_used > kIdlePeerGrace || !node_alive(cfg_.runtime_dir, name)) names.push_back(name);
  }
  for (auto& name : names) erase_node_mt(name);
}

// Makes room in a full table by forgetting the least recently used idle
// peer; false if every peer holds a connection or a pending connect.
bool Core::evict_idle_node_mt() {
  const auto now = Clock::now();
  auto victim = nodes_.end();
  for (auto it = nodes_.begin(); it != nodes_.end(); ++it) {
    const PeerNode& n = it->second;
    if (!n.conns.empty() || n.pending_connects != 0) continue;
    if (now - n.last_used < kEvictableAfter) continue;  // an answer to it may still be leaving
    if (victim == nodes_.end() || n.last_used < victim->second.last_used) victim = it;
  }
  if (victim == nodes_.end()) return false;
  erase_node_mt(victim->first);
  return true;
}

void Core::erase_node_mt(const std::string& name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  if (it->second.pidfd >= 0) ::close(it->second.pidfd);
  nodes_.erase(it);  // the DEALER closes with linger 0
  peers_.store(nodes_.size(), std::memory_order_relaxed);
}

bool Core::send_mt(PeerNode& n, Message& m) {
  m.hdr.node = cfg_.node;
  m.hdr.instance = instance_;
  m.hdr.pid = owner_pid_;
  m.hdr.boot_id = boot_id_;
  m.hdr.pid_ns = pid_ns_;
  m.hdr.token = n.our_token;
  n.last_used = Clock::now();
  try {
    if (!n.dealer) {
      auto d = std::make_unique<zmq::socket_t>(*ctx_, zmq::socket_type::dealer);
      d->set(zmq::sockopt::linger, 0);
      d->set(zmq::sockopt::sndhwm, kSndHwm);
      d->set(zmq::sockopt::rcvhwm, 1);  // nothing is ever sent back on it
      // Not ZMQ_IMMEDIATE: the first message goes right after connect(), before
      // the ipc connection completes; it waits in the pipe instead of failing.
      d->set(zmq::sockopt::reconnect_ivl, 20);
      d->set(zmq::sockopt::reconnect_ivl_max, 500);
      d->connect("ipc://" + sock_path(cfg_.runtime_dir, n.name));
      n.dealer = std::move(d);
    }
    auto bytes = oob_wire::encode(m);
    if (n.dealer->send(zmq::buffer(bytes), zmq::send_flags::dontwait)) return true;
  } catch (const zmq::error_t&) {
  }
  send_dropped_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void Core::send_disconnect_mt(PeerNode& n, const ConnShared& c) {
  Message m;
  m.hdr.type = MsgType::kDisconnect;
  m.dst_conn = c.peer_id;
  m.src_conn = c.id;
  send_mt(n, m);
}

void Core::finish_pending_mt(uint64_t id, ConnResult r) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  if (auto n = nodes_.find(it->second.node); n != nodes_.end()) --n->second.pending_connects;
  it->second.promise.set_value(std::move(r));
  pending_.erase(it);
}

void Core::add_conn_mt(PeerNode& n, std::shared_ptr<ConnShared> c) {
  // The peer heartbeats us only from now on: its silence counts from here.
  if (n.conns.empty()) n.last_rx = std::max(n.last_rx, Clock::now());
  n.conns[c->id] = std::move(c);
}

void Core::close_listener_mt(ListenerShared& l) {
  std::deque<PendingRequest> q;
  {
    std::lock_guard g(l.mu);
    l.closed = true;
    q.swap(l.queue);
  }
  l.cv.notify_all();
  for (auto& r : q) reject_mt(r, RejectReason::kNoListener);
}

void Core::start_connect_mt(const std::string& node, uint16_t port, std::vector<std::byte> blob,
                            Deadline deadline, std::promise<ConnResult> promise) {
  PeerNode* n = get_node_mt(node, true);
  if (!n) {
    promise.set_value(Errc::kNoResources);
    return;
  }
  uint64_t id = next_id_++;
  Message m;
  m.hdr.type = MsgType::kConnectReq;
  m.src_conn = id;
  m.port = port;
  m.blob = std::move(blob);
  if (!send_mt(*n, m)) {
    promise.set_value(Errc::kNoResources);
    return;
  }
  ++n->pending_connects;
  pending_.emplace(id, PendingConnect{node, deadline, std::move(promise)});
}

ConnResult Core::accept_mt(const PendingRequest& req, std::vector<std::byte> blob) {
  if (torn_down_) return Errc::kClosed;
  PeerNode* n = get_node_mt(req.hdr.node, false);
  if (!n) {
    if (!node_alive(cfg_.runtime_dir, req.hdr.node)) return Errc::kPeerDead;
    n = get_node_mt(req.hdr.node, true);
    if (!n) return Errc::kNoResources;
  }
  if (n->instance == 0) node_alive_mt(*n, req.hdr);
  if (n->instance != req.hdr.instance || !n->alive) return Errc::kPeerDead;

  auto c = std::make_shared<ConnShared>();
  c->id = next_id_++;
  c->peer_id = req.peer_conn;
  c->peer_node = req.hdr.node;
  c->peer_instance = req.hdr.instance;
  c->peer_pid = req.hdr.pid;
  c->same_host = n->same_host;
  c->peer_blob = req.blob;

  Message m;
  m.hdr.type = MsgType::kAccept;
  m.dst_conn = req.peer_conn;
  m.src_conn = c->id;
  m.blob = std::move(blob);
  if (!send_mt(*n, m)) return Errc::kNoResources;
  add_conn_mt(*n, c);
  return c;
}

void Core::reject_mt(const PendingRequest& req, RejectReason why) {
  PeerNode* n = get_node_mt(req.hdr.node, false);
  if (!n) {
    if (!node_alive(cfg_.runtime_dir, req.hdr.node)) return;
    n = get_node_mt(req.hdr.node, true);
    if (!n) return;
    node_alive_mt(*n, req.hdr);
  }
  if (n->instance != req.hdr.instance) return;  // the requester is gone
  Message m;
  m.hdr.type = MsgType::kReject;
  m.dst_conn = req.peer_conn;
  m.reason = why;
  send_mt(*n, m);
  n->flush_on_close = true;
}

// ---- message handlers ----

void Core::on_connect_req_mt(const Message& m) {
  PeerNode* n = observe_mt(m.hdr, true);
  if (!n) return;
  RejectReason why = RejectReason::kNoListener;
  if (auto it = listeners_.find(m.port); it != listeners_.end()) {
    ListenerShared& l = *it->second;
    {
      std::lock_guard g(l.mu);
      if (!l.closed && l.queue.size() < kMaxQueuedRequests) {
        l.queue.push_back(PendingRequest{m.hdr, m.src_conn, m.blob});
        l.cv.notify_one();
        return;
      }
      why = l.closed ? RejectReason::kNoListener : RejectReason::kBusy;
    }
  }
  Message r;
  r.hdr.type = MsgType::kReject;
  r.dst_conn = m.src_conn;
  r.reason = why;
  send_mt(*n, r);
}

// Whether `m` answers a CONNECT_REQ of ours to its sender's node: only such
// an answer may introduce a new incarnation of that node.
bool Core::answers_our_connect_mt(const Message& m) const {
  auto it = pending_.find(m.dst_conn);
  return it != pending_.end() && it->second.node == m.hdr.node;
}

void Core::on_accept_mt(const Message& m) {
  const bool ours = answers_our_connect_mt(m);
  PeerNode* n = observe_mt(m.hdr, ours);
  if (!n) return;
  if (!ours) {
    unknown_.fetch_add(1, std::memory_order_relaxed);
    // We gave up on this connect (deadline): tell the acceptor it is over.
    Message d;
    d.hdr.type = MsgType::kDisconnect;
    d.dst_conn = m.src_conn;
    d.src_conn = m.dst_conn;
    send_mt(*n, d);
    return;
  }
  auto c = std::make_shared<ConnShared>();
  c->id = m.dst_conn;
  c->peer_id = m.src_conn;
  c->peer_node = m.hdr.node;
  c->peer_instance = m.hdr.instance;
  c->peer_pid = m.hdr.pid;
  c->same_host = n->same_host;
  c->peer_blob = m.blob;
  add_conn_mt(*n, c);
  finish_pending_mt(m.dst_conn, std::move(c));
}

void Core::on_reject_mt(const Message& m) {
  // An answer to our CONNECT_REQ: it may come from a new incarnation.
  const bool ours = answers_our_connect_mt(m);
  PeerNode* n = observe_mt(m.hdr, ours);
  if (!n) return;
  if (!ours) {
    unknown_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  finish_pending_mt(m.dst_conn, Errc::kRefused);
}

void Core::on_disconnect_mt(const Message& m) {
  PeerNode* n = observe_mt(m.hdr, false);
  if (!n) return;
  auto it = n->conns.find(m.dst_conn);
  if (it == n->conns.end() || it->second->peer_id != m.src_conn) {
    unknown_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  auto c = std::move(it->second);
  n->conns.erase(it);
  c->leave(OobState::kClosed);
  c->notify_down();
}

void Core::on_heartbeat_mt(const Message& m) { observe_mt(m.hdr, false); }

// ---- time ----

// A peer whose pid we watch is dead when its process exits, never because it
// is slow or stopped (SIGSTOP, a debugger): its silence proves nothing.
bool Core::judged_by_silence(const PeerNode& n) {
  return n.alive && !n.conns.empty() && n.pidfd < 0;
}

int Core::poll_timeout_ms_mt(Clock::time_point now) const {
  Clock::time_point next = next_heartbeat_;
  for (auto& [name, n] : nodes_) {
    if (judged_by_silence(n)) next = std::min(next, n.last_rx + cfg_.peer_timeout);
  }
  for (auto& [id, p] : pending_) next = std::min(next, p.deadline.when());
  if (next <= now) return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
  return static_cast<int>(std::min<int64_t>(ms, 60'000));
}

void Core::on_timer_mt(Clock::time_point now) {
  std::vector<std::string> names;
  if (now >= next_heartbeat_) {
    next_heartbeat_ = now + cfg_.heartbeat_interval;
    for (auto& [name, n] : nodes_) {
      if (n.alive && !n.conns.empty()) {
        Message hb;
        hb.hdr.type = MsgType::kHeartbeat;
        send_mt(n, hb);
      }
    }
    // A node dying before it answers our connect: its lock goes away.
    std::vector<uint64_t> dead;
    for (auto& [id, p] : pending_) {
      if (!node_alive(cfg_.runtime_dir, p.node)) dead.push_back(id);
    }
    for (uint64_t id : dead) finish_pending_mt(id, Errc::kPeerDead);
    forget_idle_nodes_mt(now);
  }
  // Silence: a peer whose process we cannot watch is hung, stopped, remote
  // and gone, or dead elsewhere; we cannot tell which.
  for (auto& [name, n] : nodes_) {
    if (judged_by_silence(n) && now - n.last_rx >= cfg_.peer_timeout) names.push_back(name);
  }
  for (auto& name : names) {
    if (auto it = nodes_.find(name); it != nodes_.end()) node_died_mt(it->second);
  }
  std::vector<uint64_t> expired;
  for (auto& [id, p] : pending_) {
    if (!p.deadline.is_never() && now >= p.deadline.when()) expired.push_back(id);
  }
  for (uint64_t id : expired) finish_pending_mt(id, Errc::kTimeout);
}

void Core::teardown_mt() {
  torn_down_ = true;
  for (auto& [id, p] : pending_) p.promise.set_value(Errc::kClosed);
  pending_.clear();
  for (auto& [port, l] : listeners_) close_listener_mt(*l);
  listeners_.clear();
  std::vector<std::shared_ptr<ConnShared>> down;
  for (auto& [name, n] : nodes_) {
    for (auto& [id, c] : n.conns) {
      c->leave(OobState::kLocalClosed);
      if (n.alive) {
        send_disconnect_mt(n, *c);
        n.flush_on_close = true;
      }
      down.push_back(c);
    }
    n.conns.clear();
  }
  for (auto& c : down) c->notify_down();
  for (auto& [name, n] : nodes_) {
    if (n.pidfd >= 0) ::close(n.pidfd);
    n.pidfd = -1;
    try {
      if (n.dealer && n.flush_on_close) n.dealer->set(zmq::sockopt::linger, kShutdownLingerMs);
    } catch (const zmq::error_t&) {
    }
  }
  nodes_.clear();
  peers_.store(0, std::memory_order_relaxed);
  router_.reset();
  try {
    ctx_->close();  // waits at most kShutdownLingerMs for the last DISCONNECTs
  } catch (const zmq::error_t&) {
  }
  ctx_.reset();
}

}  // namespace clan::oob_detail
