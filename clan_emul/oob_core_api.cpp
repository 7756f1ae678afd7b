// The calls of user threads: each hands the manager thread a command and,
// where there is an answer, waits for it; failures are put in words here, on
// the caller's thread.
#include "clan_emul/oob_core.hpp"

#include "clan_emul/error_detail.hpp"

namespace clan::oob_detail {

using oob_wire::RejectReason;

template <class R>
R Core::call(std::function<R()> fn, R if_stopped) {
  // From the manager thread itself (an on_down callback): run inline, never wait on ourselves.
  if (std::this_thread::get_id() == thread_id_.load()) return fn();
  auto p = std::make_shared<std::promise<R>>();
  auto f = p->get_future();
  if (!post([p, fn = std::move(fn)] { p->set_value(fn()); })) return if_stopped;
  return f.get();
}

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

// kInvalidArgument in words for what cannot be sent to `to`.
Errc Core::check_connect_address(const PeerAddress& to, std::size_t blob_size) const {
  if (blob_size > oob_wire::kMaxBlob) {
    return set_error(Errc::kInvalidArgument, 0, "connect to '%s': the blob is %zu bytes, above %zu",
                     to.key().c_str(), blob_size, oob_wire::kMaxBlob);
  }
  if (!to.remote() && sock_path(cfg_.runtime_dir, to.name).size() > kSunPathMax) {
    return set_error(Errc::kInvalidArgument, 0, "connect to node '%s': its socket path is too long",
                     to.name.c_str());
  }
  if (to.remote() && listen_port_ == 0) {
    return set_error(Errc::kInvalidArgument, 0,
                     "connect to '%s': node '%s' listens on no tcp address (OobConfig::listen, "
                     "$CLAN_OOB_LISTEN), so a node of another host could not answer it",
                     to.key().c_str(), cfg_.node.c_str());
  }
  return Errc::kOk;
}

ConnResult Core::connect(const std::string& address, uint16_t port, std::vector<std::byte> blob,
                         Deadline deadline) {
  clear_error();
  if (!in_owner_process()) {
    return set_error(Errc::kInvalidArgument, 0, "this OOB manager belongs to the process that forked this one");
  }
  // The manager thread answers the connect: waiting for it there would
  // deadlock (and resolving a host name would hold up every peer).
  if (std::this_thread::get_id() == thread_id_.load()) return Errc::kWouldBlock;
  PeerAddress to;
  if (Errc e = parse_peer_address(address, to); e != Errc::kOk) return e;
  if (Errc e = check_connect_address(to, blob.size()); e != Errc::kOk) return e;
  if (!may_be_alive(to)) {
    return set_error(Errc::kRefused, 0, "no node '%s' is running in the runtime directory '%s'", to.name.c_str(),
                     cfg_.runtime_dir.c_str());
  }
  auto p = std::make_shared<std::promise<ConnResult>>();
  auto f = p->get_future();
  auto b = std::make_shared<std::vector<std::byte>>(std::move(blob));
  auto why = std::make_shared<std::string>();
  if (!post([this, p, b, to, port, deadline, why] {
        start_connect_mt(to, port, std::move(*b), deadline, std::move(*p), why);
      })) {
    return set_error(Errc::kClosed, 0, "this node's OOB manager has stopped");
  }
  // The manager thread always answers: by the deadline, on peer death, or at stop.
  ConnResult r = f.get();
  if (!r) describe_connect_failure(r.error(), to, port, *why);
  return r;
}

// In words, on the caller's thread, what the manager thread answered.
void Core::describe_connect_failure(Errc e, const PeerAddress& to, uint16_t port, const std::string& why) const {
  const std::string key = to.key();
  const char* n = key.c_str();
  switch (e) {
    case Errc::kRefused:
      if (!why.empty()) {
        set_error(e, 0, "node '%s' refused the connection to port %u: %s", n, port, why.c_str());
      } else {
        set_error(e, 0, "node '%s' refused the connection to port %u (nobody listens there, or too many "
                  "requests wait)", n, port);
      }
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
    if (auto it = nodes_.find(c->peer_key); it != nodes_.end()) {
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

}  // namespace clan::oob_detail
