// Liveness: heartbeats to the nodes we hold connections with, a peer whose
// pid cannot be watched declared dead by its silence, and the deadlines of
// pending connects. A peer whose pid we watch dies by its pidfd
// (oob_router.cpp, oob_peers.cpp), never by its silence.
#include "clan_emul/oob_core.hpp"

#include <algorithm>

namespace clan::oob_detail {

using oob_wire::Message;
using oob_wire::MsgType;

void Core::on_heartbeat_mt(const Message& m, const PeerAddress& from) { observe_mt(m.hdr, from, false); }

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
  for (auto& [key, n] : nodes_) {
    if (n.probe) next = std::min(next, n.probe->deadline());
  }
  if (next <= now) return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
  return static_cast<int>(std::min<int64_t>(ms, 60'000));
}

// Every heartbeat interval: a heartbeat to each node we hold a connection
// with, pending connects to nodes gone failed, idle records forgotten.
void Core::heartbeat_tick_mt(Clock::time_point now) {
  next_heartbeat_ = now + cfg_.heartbeat_interval;
  for (auto& [name, n] : nodes_) {
    if (n.alive && !n.conns.empty()) {
      Message hb;
      hb.hdr.type = MsgType::kHeartbeat;
      send_mt(n, hb);
    }
  }
  // A node of this directory dying before it answers our connect: its lock
  // goes away (one of another host: oob_tcp.cpp).
  std::vector<uint64_t> dead;
  for (auto& [id, p] : pending_) {
    const PeerNode* n = find_node_mt(p.key);
    if (n && !may_be_alive(n->addr)) dead.push_back(id);
  }
  for (uint64_t id : dead) finish_pending_mt(id, Errc::kPeerDead);
  forget_idle_nodes_mt(now);
}

void Core::on_timer_mt(Clock::time_point now) {
  std::vector<std::string> names;
  if (now >= next_heartbeat_) heartbeat_tick_mt(now);
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
  probe_deadlines_mt(now);
}

// Probes whose connect neither completed nor failed by their deadline.
void Core::probe_deadlines_mt(Clock::time_point now) {
  std::vector<std::string> keys;
  for (auto& [key, n] : nodes_) {
    if (n.probe && now >= n.probe->deadline()) keys.push_back(key);
  }
  for (auto& key : keys) {
    if (PeerNode* n = find_node_mt(key); n && n->probe) on_probe_mt(*n, now);
  }
}

}  // namespace clan::oob_detail
