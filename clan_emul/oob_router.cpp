// The manager thread's loop and its sockets: the ROUTER every peer sends to,
// one DEALER per peer node we send to, and the dispatch of each frame read
// to its message's handler.
#include "clan_emul/oob_core.hpp"

#include <unistd.h>

#include <array>
#include <cerrno>

#include "clan_emul/error_detail.hpp"
#include "clan_emul/oob_pidfd.hpp"

namespace clan::oob_detail {

using oob_wire::Message;
using oob_wire::MsgType;

namespace {

constexpr int kSndHwm = 1000;      // messages queued per peer before we drop
constexpr int kRcvHwm = 10000;
constexpr int kRouterBurst = 256;  // messages read per poll round (fairness with timers)

}  // namespace

Errc Core::bind_router() {
  // We hold the name, so a leftover socket file is a dead holder's: reclaim it.
  const std::string& path = lock_.sock_path();
  ::unlink(path.c_str());
  try {
    ctx_.emplace();
    ctx_->set(zmq::ctxopt::io_threads, 1);
    ctx_->set(zmq::ctxopt::blocky, false);
    router_.emplace(*ctx_, zmq::socket_type::router);
    router_->set(zmq::sockopt::linger, 0);
    router_->set(zmq::sockopt::rcvhwm, kRcvHwm);
    // Larger frames cannot be valid: ZeroMQ drops the sender's pipe.
    router_->set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(oob_wire::kMaxFrame));
    router_->bind("ipc://" + path);
  } catch (const zmq::error_t& ex) {
    router_.reset();
    ctx_.reset();
    // zmq_strerror (what()) also knows ZeroMQ's own error numbers.
    return set_error(Errc::kSystem, 0, "cannot listen on the socket 'ipc://%s': ZeroMQ: %s (errno %d)",
                     path.c_str(), ex.what(), ex.num());
  }
  return Errc::kOk;
}

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
    poll_once_mt(items, pid_watch);
    on_timer_mt(Clock::now());
  }
  teardown_mt();
}

// Waits for a frame, a command, a peer's exit or the next timer, and serves
// the frames and exits found.
void Core::poll_once_mt(std::vector<zmq_pollitem_t>& items, std::vector<std::string>& pid_watch) {
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
  if (rc <= 0) return;
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

bool Core::send_mt(PeerNode& n, Message& m) {
  identity_.stamp(m.hdr, n.our_token);
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

}  // namespace clan::oob_detail
