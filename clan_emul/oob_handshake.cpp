// The connection messages: a CONNECT_REQ queued at its listener, answered by
// ACCEPT or REJECT, and a connection's DISCONNECT; and the manager thread's
// side of connect, accept and reject.
#include "clan_emul/oob_core.hpp"

#include <algorithm>

namespace clan::oob_detail {

using oob_wire::Message;
using oob_wire::MsgType;
using oob_wire::RejectReason;

namespace {

// Connection `id` with node `n`, whose handshake frame carried `peer`.
template <class Node>
std::shared_ptr<ConnShared> new_conn(uint64_t id, uint64_t peer_id, const Node& n, const oob_wire::Header& peer,
                                     const std::vector<std::byte>& peer_blob) {
  auto c = std::make_shared<ConnShared>();
  c->id = id;
  c->peer_id = peer_id;
  c->peer_node = peer.node;
  c->peer_key = n.key;
  c->peer_instance = peer.instance;
  c->peer_pid = peer.pid;
  c->peer_boot_id = peer.boot_id;
  c->on_this_host = n.watch_pid;
  c->peer_blob = peer_blob;
  return c;
}

}  // namespace

void Core::finish_pending_mt(uint64_t id, ConnResult r) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  if (auto n = nodes_.find(it->second.key); n != nodes_.end()) --n->second.pending_connects;
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

void Core::start_connect_mt(const PeerAddress& to, uint16_t port, std::vector<std::byte> blob, Deadline deadline,
                            std::promise<ConnResult> promise, std::shared_ptr<std::string> why) {
  PeerNode* n = get_node_mt(to, true);
  if (!n) {
    promise.set_value(Errc::kNoResources);
    return;
  }
  uint64_t id = next_id_++;
  Message m;
  m.hdr.type = MsgType::kConnectReq;
  m.src_conn = id;
  m.port = port;
  m.dst_node = to.name;
  m.blob = std::move(blob);
  if (!send_mt(*n, m)) {
    promise.set_value(Errc::kNoResources);
    return;
  }
  ++n->pending_connects;
  pending_.emplace(id, PendingConnect{n->key, deadline, std::move(promise), std::move(why)});
}

// The record of a request's sender, made again if it was forgotten while
// the request waited; nullptr if the requester is gone (or no room).
Core::PeerNode* Core::requester_mt(const PendingRequest& req) {
  if (PeerNode* n = get_node_mt(req.from, false)) return n;
  if (!may_be_alive(req.from)) return nullptr;
  PeerNode* n = get_node_mt(req.from, true);
  if (n && n->instance == 0) node_alive_mt(*n, req.hdr);
  return n;
}

ConnResult Core::accept_mt(const PendingRequest& req, std::vector<std::byte> blob) {
  if (torn_down_) return Errc::kClosed;
  PeerNode* n = requester_mt(req);
  if (!n) return may_be_alive(req.from) ? Errc::kNoResources : Errc::kPeerDead;
  if (n->instance == 0) node_alive_mt(*n, req.hdr);
  if (n->instance != req.hdr.instance || !n->alive) return Errc::kPeerDead;

  auto c = new_conn(next_id_++, req.peer_conn, *n, req.hdr, req.blob);

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
  PeerNode* n = requester_mt(req);
  if (!n) return;
  if (n->instance != req.hdr.instance) return;  // the requester is gone
  Message m;
  m.hdr.type = MsgType::kReject;
  m.dst_conn = req.peer_conn;
  m.reason = why;
  send_mt(*n, m);
  n->flush_on_close = true;
}

void Core::on_connect_req_mt(const Message& m, const PeerAddress& from) {
  if (m.dst_node != cfg_.node) return refuse_wrong_node_mt(m, from);
  PeerNode* n = observe_mt(m.hdr, from, true);
  if (n) queue_request_mt(*n, m, from);
}

// A CONNECT_REQ meant for another node: its token is for that node, so it
// proves nothing to us and binds no record; the answer says who is here.
void Core::refuse_wrong_node_mt(const Message& m, const PeerAddress& from) {
  PeerNode* n = get_node_mt(from, false);
  if (!n && (!may_be_alive(from) || !(n = get_node_mt(from, true)))) {
    unknown_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Message r;
  r.hdr.type = MsgType::kReject;
  r.dst_conn = m.src_conn;
  r.reason = RejectReason::kWrongNode;
  send_mt(*n, r);
}

// Queues a CONNECT_REQ at its port's listener, or rejects it at once.
void Core::queue_request_mt(PeerNode& n, const Message& m, const PeerAddress& from) {
  RejectReason why = RejectReason::kNoListener;
  if (auto it = listeners_.find(m.port); it != listeners_.end()) {
    ListenerShared& l = *it->second;
    {
      std::lock_guard g(l.mu);
      if (!l.closed && l.queue.size() < kMaxQueuedRequests) {
        l.queue.push_back(PendingRequest{m.hdr, m.src_conn, m.blob, from, from.key(), n.watch_pid});
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
  send_mt(n, r);
}

// Whether `m` answers a CONNECT_REQ of ours to its sender's node: only such
// an answer may introduce a new incarnation of that node.
bool Core::answers_our_connect_mt(const Message& m, const PeerAddress& from) const {
  auto it = pending_.find(m.dst_conn);
  return it != pending_.end() && it->second.key == from.key();
}

void Core::on_accept_mt(const Message& m, const PeerAddress& from) {
  const bool ours = answers_our_connect_mt(m, from);
  PeerNode* n = observe_mt(m.hdr, from, ours);
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
  auto c = new_conn(m.dst_conn, m.src_conn, *n, m.hdr, m.blob);
  add_conn_mt(*n, c);
  finish_pending_mt(m.dst_conn, std::move(c));
}

void Core::on_reject_mt(const Message& m, const PeerAddress& from) {
  if (m.reason == RejectReason::kWrongNode && on_wrong_node_mt(m, from)) return;
  // An answer to our CONNECT_REQ: it may come from a new incarnation.
  const bool ours = answers_our_connect_mt(m, from);
  PeerNode* n = observe_mt(m.hdr, from, ours);
  if (!n) return;
  if (!ours) {
    unknown_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  finish_pending_mt(m.dst_conn, Errc::kRefused);
}

// Another node than the one named answers at the address of a connect of
// ours: the connect is refused, in words. Like any first contact, the
// answer cannot be proved; it costs nothing but that pending connect.
bool Core::on_wrong_node_mt(const Message& m, const PeerAddress& from) {
  auto it = pending_.find(m.dst_conn);
  if (it == pending_.end() || !from.remote()) return false;
  PeerNode* n = find_node_mt(it->second.key);
  if (!n || n->addr.host_port() != from.host_port() || n->addr.name == from.name) return false;
  if (it->second.why) {
    *it->second.why = "the node at " + from.host_port() + " is '" + from.name + "', not '" + n->addr.name + "'";
  }
  finish_pending_mt(m.dst_conn, Errc::kRefused);
  return true;
}

void Core::on_disconnect_mt(const Message& m, const PeerAddress& from) {
  PeerNode* n = observe_mt(m.hdr, from, false);
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

}  // namespace clan::oob_detail
