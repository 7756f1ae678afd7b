// The OOB manager's engine (Core): the manager thread, which owns every
// ZeroMQ socket, keeps the table of peer nodes and answers every message,
// and the calls through which user threads hand it commands. What it builds
// on lives apart: the node's identity (oob_identity.hpp), the lock that
// holds its name (oob_node_lock.hpp), the runtime directory
// (oob_runtime_dir.hpp) and the state it shares with the user's objects
// (oob_shared.hpp). Not part of the public API.
//
// Core's members are defined by concern:
//   oob_core.cpp       start, stop, the command queue, teardown
//   oob_core_api.cpp   the user threads' calls: listen, connect, accept, reject, disconnect
//   oob_router.cpp     the manager thread's loop, the ROUTER, the DEALERs, dispatch
//   oob_handshake.cpp  the connection messages: CONNECT_REQ, ACCEPT, REJECT, DISCONNECT
//   oob_peers.cpp      the peer table: records, which frames are believed, eviction
//   oob_liveness.cpp   heartbeats, silence, pending connects' deadlines
//   oob_tcp.cpp        the tcp ROUTER, and the death of a peer of another host:
//                      its DEALER's monitor and the probe of its address
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>
#include <zmq.hpp>

#include "clan_emul/oob_address.hpp"
#include "clan_emul/oob_identity.hpp"
#include "clan_emul/oob_manager.hpp"
#include "clan_emul/oob_node_lock.hpp"
#include "clan_emul/oob_runtime_dir.hpp"
#include "clan_emul/oob_shared.hpp"
#include "clan_emul/oob_tcp_probe.hpp"
#include "clan_emul/oob_wire.hpp"

namespace clan::oob_detail {

class Core : public std::enable_shared_from_this<Core> {
 public:
  static Result<std::shared_ptr<Core>> start(OobConfig cfg);
  ~Core();
  // Stops the thread; everything is torn down on it. Idempotent. Owner process only.
  void stop();

  const std::string& node() const { return cfg_.node; }
  const std::string& runtime_dir() const { return cfg_.runtime_dir; }
  OobStats stats() const;
  std::chrono::milliseconds peer_timeout() const { return cfg_.peer_timeout; }
  // The tcp address the node listens on ("host:port"), empty if none.
  const std::string& listen_address() const { return listen_address_; }
  uint16_t listen_port() const { return listen_port_; }
  bool in_owner_process() const;

  // --- Any user thread (each returns kClosed once stopped). ---
  Result<std::shared_ptr<ListenerShared>> listen(uint16_t port);
  void unlisten(std::shared_ptr<ListenerShared> l);
  ConnResult connect(const std::string& address, uint16_t port, std::vector<std::byte> blob,
                     Deadline deadline);
  ConnResult accept(PendingRequest req, std::vector<std::byte> blob);
  void reject(PendingRequest req);
  // After ConnShared::leave(kLocalClosed) succeeded on the caller's thread.
  void local_disconnect(std::shared_ptr<ConnShared> c);

 private:
  struct PeerNode {
    PeerAddress addr;
    std::string key;                         // addr.key(): the table's key
    std::unique_ptr<zmq::socket_t> dealer;   // created lazily
    std::unique_ptr<zmq::socket_t> monitor;  // remote: the DEALER's connection events
    std::unique_ptr<TcpProbe> probe;         // remote: is anything listening at addr?
    uint64_t instance = 0;                  // 0: not heard from yet
    oob_wire::Token token{};                // its token for us: proves its frames
    oob_wire::Token our_token{};            // ours for it (token_for(name))
    bool alive = false;                     // heard from and not declared dead since
    pid_t pid = 0;
    oob_wire::BootId boot_id{};
    bool same_host = false;   // same boot id
    bool watch_pid = false;   // same boot id and pid namespace: pidfd is meaningful
    int pidfd = -1;
    Clock::time_point last_rx{};
    Clock::time_point last_used{};
    std::unordered_map<uint64_t, std::shared_ptr<ConnShared>> conns;
    int pending_connects = 0;
    bool flush_on_close = false;  // teardown sent it something worth a short linger
  };
  struct PendingConnect {
    std::string key;  // of the node it goes to
    Deadline deadline;
    std::promise<ConnResult> promise;
    std::shared_ptr<std::string> why;  // a refusal's words, for the caller's thread
  };

  Core(OobConfig cfg, NodeIdentity identity);
  void release_name();
  bool post(std::function<void()> fn);  // false once stopping
  template <class R>
  R call(std::function<R()> fn, R if_stopped);
  void describe_connect_failure(Errc e, const PeerAddress& to, uint16_t port, const std::string& why) const;
  Errc check_connect_address(const PeerAddress& to, std::size_t blob_size) const;

  // --- Manager thread only (_mt). ---
  // The commands user threads post, and the close at stop (oob_core.cpp).
  void run_commands_mt();
  void teardown_mt();

  // The loop and the sockets (oob_router.cpp).
  // Creates the ZeroMQ context and binds the ROUTER (start()).
  Errc bind_router();
  static void set_router_options(zmq::socket_t& router);  // throws zmq::error_t
  void run_mt();
  // What an item of the poll set is: the sockets, or the record it watches.
  enum class Watch : uint8_t { kRouter, kWake, kTcpRouter, kPidfd, kMonitor, kProbe };
  struct Watched {
    Watch what;
    std::string key;
  };
  void poll_once_mt(std::vector<zmq_pollitem_t>& items, std::vector<Watched>& watched);
  void add_peer_items_mt(std::vector<zmq_pollitem_t>& items, std::vector<Watched>& watched);
  void serve_item_mt(const zmq_pollitem_t& item, const Watched& w);
  void read_router_mt(zmq::socket_t& router, bool tcp);
  bool origin_of(const oob_wire::Message& m, zmq::message_t& payload, bool tcp, PeerAddress& from) const;
  void dispatch_mt(const oob_wire::Message& m, const PeerAddress& from);
  std::unique_ptr<zmq::socket_t> make_dealer_mt(PeerNode& n);
  bool send_mt(PeerNode& n, oob_wire::Message& m);  // fills the header
  void send_disconnect_mt(PeerNode& n, const ConnShared& c);

  // Connections (oob_handshake.cpp).
  void start_connect_mt(const PeerAddress& to, uint16_t port, std::vector<std::byte> blob, Deadline deadline,
                        std::promise<ConnResult> promise, std::shared_ptr<std::string> why);
  ConnResult accept_mt(const PendingRequest& req, std::vector<std::byte> blob);
  void reject_mt(const PendingRequest& req, oob_wire::RejectReason why);
  void close_listener_mt(ListenerShared& l);
  void finish_pending_mt(uint64_t id, ConnResult r);
  void add_conn_mt(PeerNode& n, std::shared_ptr<ConnShared> c);
  PeerNode* requester_mt(const PendingRequest& req);
  void on_connect_req_mt(const oob_wire::Message& m, const PeerAddress& from);
  void queue_request_mt(PeerNode& n, const oob_wire::Message& m, const PeerAddress& from);
  void refuse_wrong_node_mt(const oob_wire::Message& m, const PeerAddress& from);
  bool answers_our_connect_mt(const oob_wire::Message& m, const PeerAddress& from) const;
  void on_accept_mt(const oob_wire::Message& m, const PeerAddress& from);
  void on_reject_mt(const oob_wire::Message& m, const PeerAddress& from);
  bool on_wrong_node_mt(const oob_wire::Message& m, const PeerAddress& from);
  void on_disconnect_mt(const oob_wire::Message& m, const PeerAddress& from);

  // The peer table (oob_peers.cpp).
  // The sender's record if the frame is believed; nullptr (counted as
  // unknown or forged) otherwise. Only a handshake frame (`introduces`) may
  // create a record or bring a new incarnation of the node.
  PeerNode* observe_mt(const oob_wire::Header& h, const PeerAddress& from, bool introduces);
  bool believed_mt(PeerNode& n, const oob_wire::Header& h, bool introduces);
  bool may_replace_mt(PeerNode& n);
  PeerNode* find_node_mt(const std::string& key);
  PeerNode* get_node_mt(const PeerAddress& addr, bool create);
  // A node of this runtime directory holds its name; one of another host
  // cannot be asked (its death is seen by its address, oob_tcp.cpp).
  bool may_be_alive(const PeerAddress& addr) const;
  void node_alive_mt(PeerNode& n, const oob_wire::Header& h);
  void node_died_mt(PeerNode& n);
  void fail_pending_mt(const std::string& key, Errc e, const std::string& why);
  void erase_node_mt(const std::string& key);
  void forget_idle_nodes_mt(Clock::time_point now);
  bool evict_idle_node_mt();
  void return_free_memory_mt(std::size_t forgotten);

  // Liveness and timers (oob_liveness.cpp).
  void on_heartbeat_mt(const oob_wire::Message& m, const PeerAddress& from);
  void on_timer_mt(Clock::time_point now);
  void heartbeat_tick_mt(Clock::time_point now);
  int poll_timeout_ms_mt(Clock::time_point now) const;
  static bool judged_by_silence(const PeerNode& n);

  // Tcp and the death of peers of other hosts (oob_tcp.cpp).
  Errc bind_tcp_router();
  void watch_connection_mt(PeerNode& n, zmq::socket_t& dealer);
  void on_monitor_mt(PeerNode& n);
  void on_probe_mt(PeerNode& n, Clock::time_point now);
  void probe_deadlines_mt(Clock::time_point now);
  void nothing_listens_mt(PeerNode& n);

  static constexpr std::size_t kMaxPeers = 1024;
  static constexpr std::size_t kMaxQueuedRequests = 1024;
  // Peers forgotten between two returns of the allocator's free memory.
  static constexpr std::size_t kForgottenPerTrim = 64;

  OobConfig cfg_;
  NodeIdentity identity_;
  NodeLock lock_;
  int wake_fd_ = -1;  // eventfd
  std::thread thread_;
  std::atomic<std::thread::id> thread_id_{};

  std::mutex q_mu_;
  std::deque<std::function<void()>> queue_;  // guarded by q_mu_
  bool stopping_ = false;                    // guarded by q_mu_
  bool stopped_ = false;                     // stop() finished; owner's threads only

  std::atomic<uint64_t> malformed_{0}, unknown_{0}, forged_{0}, send_dropped_{0}, peers_{0};

  // Owned by the manager thread (created before it starts).
  std::optional<zmq::context_t> ctx_;
  std::optional<zmq::socket_t> router_;
  std::optional<zmq::socket_t> tcp_router_;  // when cfg_.listen names an address
  std::string listen_address_;               // host:port bound; set before the thread starts
  uint16_t listen_port_ = 0;
  uint64_t next_monitor_ = 1;                // names the DEALERs' monitor endpoints
  std::map<std::string, PeerNode> nodes_;
  std::map<uint16_t, std::shared_ptr<ListenerShared>> listeners_;
  std::map<uint64_t, PendingConnect> pending_;
  uint64_t next_id_ = 1;
  std::size_t forgotten_since_trim_ = 0;
  bool torn_down_ = false;  // teardown started: callbacks may not add listeners or connections
  Clock::time_point next_heartbeat_{};
};

}  // namespace clan::oob_detail
