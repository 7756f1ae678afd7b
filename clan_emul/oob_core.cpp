#include "clan_emul/oob_core.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "clan_emul/error_detail.hpp"
#include "clan_emul/oob_config.hpp"
#include "clan_emul/oob_sweep.hpp"

namespace clan::oob_detail {

namespace {

constexpr int kShutdownLingerMs = 100;  // lets DISCONNECTs leave at shutdown, bounded

}  // namespace

Core::Core(OobConfig cfg, NodeIdentity identity) : cfg_(std::move(cfg)), identity_(std::move(identity)) {}

Result<std::shared_ptr<Core>> Core::start(OobConfig cfg) {
  clear_error();
  if (Errc e = resolve_config(cfg); e != Errc::kOk) return e;
  auto identity = NodeIdentity::create(cfg.node);
  if (!identity) return identity.error();
  std::shared_ptr<Core> c(new Core(std::move(cfg), std::move(identity).value()));
  if (Errc e = c->lock_.acquire(c->cfg_.runtime_dir, c->cfg_.node); e != Errc::kOk) return e;
  sweep_stale_nodes(c->cfg_.runtime_dir, c->cfg_.node);
  c->stopped_ = true;  // nothing to stop until the thread runs

  c->wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (c->wake_fd_ < 0) return set_error(Errc::kSystem, errno, "cannot create the manager's wake-up: eventfd");
  if (Errc e = c->bind_router(); e != Errc::kOk) return e;
  c->stopped_ = false;
  try {
    c->thread_ = std::thread([raw = c.get()] { raw->run_mt(); });
  } catch (const std::system_error& ex) {
    c->stopped_ = true;
    c->router_.reset();
    c->tcp_router_.reset();
    c->ctx_.reset();
    return set_error(Errc::kSystem, ex.code().value(), "cannot start the manager thread");
  }
  return c;
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

void Core::release_name() { lock_.release(); }

bool Core::in_owner_process() const { return ::getpid() == identity_.pid(); }

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
  tcp_router_.reset();
  try {
    ctx_->close();  // waits at most kShutdownLingerMs for the last DISCONNECTs
  } catch (const zmq::error_t&) {
  }
  ctx_.reset();
}

}  // namespace clan::oob_detail
