// The manager thread's loop and its sockets: the ROUTERs every peer sends to
// (ipc, and tcp when the node listens there), one DEALER per peer node we
// send to, and the dispatch of each frame read to its message's handler,
// with the address it came from.
#include "clan_emul/oob_core.hpp"

#include <unistd.h>

#include <array>
#include <cerrno>

#include "clan_emul/error_detail.hpp"
#include "clan_emul/oob_address.hpp"
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
    set_router_options(*router_);
    router_->bind("ipc://" + path);
  } catch (const zmq::error_t& ex) {
    router_.reset();
    ctx_.reset();
    // zmq_strerror (what()) also knows ZeroMQ's own error numbers.
    return set_error(Errc::kSystem, 0, "cannot listen on the socket 'ipc://%s': ZeroMQ: %s (errno %d)",
                     path.c_str(), ex.what(), ex.num());
  }
  if (Errc e = bind_tcp_router(); e != Errc::kOk) {
    router_.reset();
    ctx_.reset();
    return e;
  }
  return Errc::kOk;
}

void Core::set_router_options(zmq::socket_t& router) {
  router.set(zmq::sockopt::linger, 0);
  router.set(zmq::sockopt::rcvhwm, kRcvHwm);
  // Larger frames cannot be valid: ZeroMQ drops the sender's pipe.
  router.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(oob_wire::kMaxFrame));
}

void Core::run_mt() {
  thread_id_.store(std::this_thread::get_id());
  next_heartbeat_ = Clock::now() + cfg_.heartbeat_interval;
  std::vector<zmq_pollitem_t> items;
  std::vector<Watched> watched;  // what items[i] is
  for (;;) {
    bool stop;
    {
      std::lock_guard g(q_mu_);
      stop = stopping_;
    }
    run_commands_mt();  // after seeing stopping_: every accepted command runs
    if (stop) break;
    poll_once_mt(items, watched);
    on_timer_mt(Clock::now());
  }
  teardown_mt();
}

// Waits for a frame, a command, a peer's exit or connection event, or the
// next timer, and serves what it found.
void Core::poll_once_mt(std::vector<zmq_pollitem_t>& items, std::vector<Watched>& watched) {
  items.clear();
  watched.clear();
  items.push_back({router_->handle(), 0, ZMQ_POLLIN, 0});
  watched.push_back({Watch::kRouter, {}});
  items.push_back({nullptr, wake_fd_, ZMQ_POLLIN, 0});
  watched.push_back({Watch::kWake, {}});
  if (tcp_router_) {
    items.push_back({tcp_router_->handle(), 0, ZMQ_POLLIN, 0});
    watched.push_back({Watch::kTcpRouter, {}});
  }
  add_peer_items_mt(items, watched);
  int rc = zmq_poll(items.data(), static_cast<int>(items.size()), poll_timeout_ms_mt(Clock::now()));
  if (rc < 0 && zmq_errno() != EINTR) {
    // Should not happen; don't spin if it does.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (rc <= 0) return;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].revents) serve_item_mt(items[i], watched[i]);
  }
}

void Core::add_peer_items_mt(std::vector<zmq_pollitem_t>& items, std::vector<Watched>& watched) {
  for (auto& [key, n] : nodes_) {
    if (n.pidfd >= 0) {
      items.push_back({nullptr, n.pidfd, ZMQ_POLLIN, 0});
      watched.push_back({Watch::kPidfd, key});
    }
    if (n.monitor) {
      items.push_back({n.monitor->handle(), 0, ZMQ_POLLIN, 0});
      watched.push_back({Watch::kMonitor, key});
    }
    if (n.probe && n.probe->fd() >= 0) {
      items.push_back({nullptr, n.probe->fd(), ZMQ_POLLOUT, 0});
      watched.push_back({Watch::kProbe, key});
    }
  }
}

void Core::serve_item_mt(const zmq_pollitem_t& item, const Watched& w) {
  if (w.what == Watch::kWake) {
    uint64_t v;
    [[maybe_unused]] auto n = ::read(wake_fd_, &v, sizeof v);
    return;
  }
  if (w.what == Watch::kRouter) return read_router_mt(*router_, false);
  if (w.what == Watch::kTcpRouter) return read_router_mt(*tcp_router_, true);
  // Serving an earlier item may have forgotten the record, or replaced a
  // restarted node's pidfd by one of the same number: ask what it holds now.
  PeerNode* n = find_node_mt(w.key);
  if (!n) return;
  if (w.what == Watch::kMonitor && n->monitor) return on_monitor_mt(*n);
  if (w.what == Watch::kProbe && n->probe) return on_probe_mt(*n, Clock::now());
  // The peer process exited (pidfd readable).
  if (w.what == Watch::kPidfd && n->pidfd == item.fd && pidfd_fired(n->pidfd)) node_died_mt(*n);
}

void Core::read_router_mt(zmq::socket_t& router, bool tcp) {
  for (int i = 0; i < kRouterBurst; ++i) {
    try {
      zmq::message_t id;
      if (!router.recv(id, zmq::recv_flags::dontwait)) return;
      int parts = 1;
      zmq::message_t payload;
      bool more = id.more();
      while (more) {
        zmq::message_t part;
        if (!router.recv(part, zmq::recv_flags::dontwait)) break;
        more = part.more();
        if (++parts == 2) payload = std::move(part);
      }
      if (parts != 2) {
        malformed_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      auto m = oob_wire::decode({payload.data<std::byte>(), payload.size()});
      PeerAddress from;
      if (!m || !origin_of(*m, payload, tcp, from)) {
        malformed_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      dispatch_mt(*m, from);
    } catch (const zmq::error_t&) {
      return;
    }
  }
}

// Who sent `m`: a node of this runtime directory (ipc), or the node of that
// name at the address the frame came from and the port it says it listens
// on (tcp). A frame over tcp without a port to answer at is malformed.
bool Core::origin_of(const Message& m, zmq::message_t& payload, bool tcp, PeerAddress& from) const {
  from.name = m.hdr.node;
  if (!tcp) return true;
  if (m.hdr.reply_port == 0) return false;
  try {
    from.host = canonical_ip(payload.gets("Peer-Address"));
  } catch (const zmq::error_t&) {
    return false;
  }
  from.port = m.hdr.reply_port;
  return !from.host.empty();
}

void Core::dispatch_mt(const Message& m, const PeerAddress& from) {
  using Handler = void (Core::*)(const Message&, const PeerAddress&);
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
  (this->*kHandlers[t])(m, from);
}

// The DEALER to node `n`: its runtime directory's socket, or its tcp address,
// whose connection events are watched (oob_tcp.cpp). Throws zmq::error_t.
std::unique_ptr<zmq::socket_t> Core::make_dealer_mt(PeerNode& n) {
  auto d = std::make_unique<zmq::socket_t>(*ctx_, zmq::socket_type::dealer);
  d->set(zmq::sockopt::linger, 0);
  d->set(zmq::sockopt::sndhwm, kSndHwm);
  d->set(zmq::sockopt::rcvhwm, 1);  // nothing is ever sent back on it
  // Not ZMQ_IMMEDIATE: the first message goes right after connect(), before
  // the connection completes; it waits in the pipe instead of failing.
  d->set(zmq::sockopt::reconnect_ivl, 20);
  d->set(zmq::sockopt::reconnect_ivl_max, 500);
  if (!n.addr.remote()) {
    d->connect("ipc://" + sock_path(cfg_.runtime_dir, n.addr.name));
    return d;
  }
  if (n.addr.host.front() == '[') d->set(zmq::sockopt::ipv6, 1);
  watch_connection_mt(n, *d);  // before connect(): no event is missed
  d->connect("tcp://" + n.addr.host_port());
  return d;
}

bool Core::send_mt(PeerNode& n, Message& m) {
  identity_.stamp(m.hdr, n.our_token);
  m.hdr.reply_port = listen_port_;
  n.last_used = Clock::now();
  try {
    if (!n.dealer) n.dealer = make_dealer_mt(n);
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
