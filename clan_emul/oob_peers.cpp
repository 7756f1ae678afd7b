// The table of peer nodes: one record per node we talk to, bound to the
// incarnation (instance and token) of its first handshake; which frames are
// believed; and how records are made, declared dead and forgotten.
#include "clan_emul/oob_core.hpp"

#include <malloc.h>
#include <unistd.h>

#include "clan_emul/oob_pidfd.hpp"

namespace clan::oob_detail {

namespace {

constexpr auto kIdlePeerGrace = std::chrono::seconds(3);   // a peer without connections is forgotten
constexpr auto kEvictableAfter = std::chrono::seconds(1);  // idle this long: may make room in a full table

}  // namespace

Core::PeerNode* Core::find_node_mt(const std::string& key) {
  auto it = nodes_.find(key);
  return it == nodes_.end() ? nullptr : &it->second;
}

Core::PeerNode* Core::get_node_mt(const PeerAddress& addr, bool create) {
  const std::string key = addr.key();
  if (auto it = nodes_.find(key); it != nodes_.end()) return &it->second;
  if (!create) return nullptr;
  if (nodes_.size() >= kMaxPeers && !evict_idle_node_mt()) return nullptr;
  PeerNode& n = nodes_[key];
  n.addr = addr;
  n.key = key;
  // Keyed by the address: two hosts' nodes of one name learn different tokens.
  n.our_token = identity_.token_for(key);
  n.last_used = Clock::now();
  peers_.store(nodes_.size(), std::memory_order_relaxed);
  return &n;
}

bool Core::may_be_alive(const PeerAddress& addr) const {
  return addr.remote() || node_alive(cfg_.runtime_dir, addr.name);
}

// Every believed message is proof of life of its sender's incarnation.
Core::PeerNode* Core::observe_mt(const oob_wire::Header& h, const PeerAddress& from, bool introduces) {
  PeerNode* n = get_node_mt(from, false);
  if (!n) {
    // Only for replies we owe: never allocate for a node that is not alive.
    if (!introduces || !may_be_alive(from) || !(n = get_node_mt(from, true))) {
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

void Core::node_alive_mt(PeerNode& n, const oob_wire::Header& h) {
  n.instance = h.instance;
  n.token = h.token;
  n.alive = true;
  n.pid = h.pid;
  n.boot_id = h.boot_id;
  n.same_host = identity_.same_host(h);
  // A pid means something only in our pid namespace (containers share boot ids).
  n.watch_pid = n.same_host && identity_.same_pid_namespace(h);
  if (n.pidfd >= 0) ::close(n.pidfd);
  n.pidfd = -1;
  // ESRCH here is not proof of death (pid namespaces); heartbeats decide then.
  if (n.watch_pid) n.pidfd = open_pidfd(n.pid);
  n.last_rx = Clock::now();
}

void Core::node_died_mt(PeerNode& n) {
  auto conns = std::move(n.conns);
  n.conns.clear();
  n.alive = false;
  if (n.pidfd >= 0) ::close(n.pidfd);
  n.pidfd = -1;
  fail_pending_mt(n.key, Errc::kPeerDead, {});
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
  for (auto& [key, n] : nodes_) {
    if (!n.conns.empty() || n.pending_connects != 0) continue;
    if (now - n.last_used > kIdlePeerGrace || !may_be_alive(n.addr)) names.push_back(key);
  }
  for (auto& name : names) erase_node_mt(name);
  return_free_memory_mt(names.size());
}

// Every peer costs this thread a DEALER (ZeroMQ's socket, pipes and buffers,
// tens of KiB) and a record, made here and freed here or by ZeroMQ's reaper,
// interleaved with the longer-lived allocations of the peers still held. With
// clients churning, the allocator keeps the pages of those freed blocks, and
// its heaps ratchet up to the largest set of peers ever held at once, spread
// over fragments: a server's memory would creep with the clients it ever
// served, though nothing of them is left. So after every kForgottenPerTrim
// forgotten peers, the free pages go back to the system. malloc_trim walks
// every arena under its lock; no fast path allocates, so it delays nothing
// there, and a server without churn never calls it.
void Core::return_free_memory_mt(std::size_t forgotten) {
  forgotten_since_trim_ += forgotten;
  if (forgotten_since_trim_ < kForgottenPerTrim) return;
  forgotten_since_trim_ = 0;
#ifdef __GLIBC__
  malloc_trim(0);
#endif
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

// Fails every pending connect to node `key` with `e`; `why` gives the words.
void Core::fail_pending_mt(const std::string& key, Errc e, const std::string& why) {
  std::vector<uint64_t> ids;
  for (auto& [id, p] : pending_) {
    if (p.key != key) continue;
    if (p.why && !why.empty()) *p.why = why;
    ids.push_back(id);
  }
  for (uint64_t id : ids) finish_pending_mt(id, e);
}

void Core::erase_node_mt(const std::string& key) {
  auto it = nodes_.find(key);
  if (it == nodes_.end()) return;
  if (it->second.pidfd >= 0) ::close(it->second.pidfd);
  nodes_.erase(it);  // the DEALER closes with linger 0
  peers_.store(nodes_.size(), std::memory_order_relaxed);
}

}  // namespace clan::oob_detail
