// Internals of the OOB connection manager: the state shared between user
// objects and the manager thread, and the manager thread itself (Core).
// Not part of the public API.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
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

#include "clan_emul/oob_manager.hpp"
#include "clan_emul/oob_wire.hpp"
#include "clan_emul/siphash.hpp"

namespace clan::oob_detail {

// Shared by an OobConnection and the manager thread.
struct ConnShared {
  // Immutable after creation.
  uint64_t id = 0;       // ours
  uint64_t peer_id = 0;  // the peer's id for the same connection
  std::string peer_node;
  uint64_t peer_instance = 0;
  pid_t peer_pid = 0;
  bool same_host = false;
  std::vector<std::byte> peer_blob;

  std::atomic<OobState> state{OobState::kConnected};

  // Leaves kConnected for `to`; false if another party already did. Any thread.
  bool leave(OobState to);
  // Calls on_down once; manager thread (or teardown). Idempotent.
  void notify_down();
  void set_on_down(std::function<void(OobState)> fn);
  void forget_on_down();  // the OobConnection is going away
  Errc wait_down(Deadline d);

 private:
  std::mutex wait_mu_;
  std::condition_variable wait_cv_;
  // Held while on_down runs so that the owner's destructor waits for it;
  // recursive so that a callback may drop the last reference to its connection.
  std::recursive_mutex cb_mu_;
  std::function<void(OobState)> on_down_;
  bool notified_ = false;
};

// A CONNECT_REQ waiting in a listener's queue (or held by an OobRequest).
struct PendingRequest {
  oob_wire::Header hdr;  // the requester's identity (node, instance, pid, boot id)
  uint64_t peer_conn = 0;
  std::vector<std::byte> blob;
};

// Shared by an OobListener and the manager thread.
struct ListenerShared {
  uint16_t port = 0;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<PendingRequest> queue;  // guarded by mu
  bool closed = false;               // guarded by mu
};

using ConnResult = Result<std::shared_ptr<ConnShared>>;

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
  bool in_owner_process() const;

  // --- Any user thread (each returns kClosed once stopped). ---
  Result<std::shared_ptr<ListenerShared>> listen(uint16_t port);
  void unlisten(std::shared_ptr<ListenerShared> l);
  ConnResult connect(const std::string& node, uint16_t port, std::vector<std::byte> blob,
                     Deadline deadline);
  ConnResult accept(PendingRequest req, std::vector<std::byte> blob);
  void reject(PendingRequest req);
  // After ConnShared::leave(kLocalClosed) succeeded on the caller's thread.
  void local_disconnect(std::shared_ptr<ConnShared> c);

  // Public for the atfork handler only.
  int lock_fd_ = -1;

 private:
  struct PeerNode {
    std::string name;
    std::unique_ptr<zmq::socket_t> dealer;  // created lazily
    uint64_t instance = 0;                  // 0: not heard from yet
    oob_wire::Token token{};                // its token for us: proves its frames
    oob_wire::Token our_token{};            // ours for it (token_for(name))
    bool alive = false;                     // heard from and not declared dead since
    pid_t pid = 0;
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
    std::string node;
    Deadline deadline;
    std::promise<ConnResult> promise;
  };

  explicit Core(OobConfig cfg);
  void release_name();
  bool post(std::function<void()> fn);  // false once stopping
  template <class R>
  R call(std::function<R()> fn, R if_stopped);

  // --- Manager thread only (_mt). ---
  void run_mt();
  void run_commands_mt();
  void read_router_mt();
  void dispatch_mt(const oob_wire::Message& m);
  void on_connect_req_mt(const oob_wire::Message& m);
  bool answers_our_connect_mt(const oob_wire::Message& m) const;
  void on_accept_mt(const oob_wire::Message& m);
  void on_reject_mt(const oob_wire::Message& m);
  void on_disconnect_mt(const oob_wire::Message& m);
  void on_heartbeat_mt(const oob_wire::Message& m);
  void on_timer_mt(Clock::time_point now);
  int poll_timeout_ms_mt(Clock::time_point now) const;
  static bool judged_by_silence(const PeerNode& n);
  // The sender's record if the frame is believed; nullptr (counted as
  // unknown or forged) otherwise. Only a handshake frame (`introduces`) may
  // create a record or bring a new incarnation of the node.
  PeerNode* observe_mt(const oob_wire::Header& h, bool introduces);
  bool believed_mt(PeerNode& n, const oob_wire::Header& h, bool introduces);
  bool may_replace_mt(PeerNode& n);
  oob_wire::Token token_for(const std::string& peer) const;
  PeerNode* get_node_mt(const std::string& name, bool create);
  void node_alive_mt(PeerNode& n, const oob_wire::Header& h);
  void node_died_mt(PeerNode& n);
  void erase_node_mt(const std::string& name);
  void forget_idle_nodes_mt(Clock::time_point now);
  bool evict_idle_node_mt();
  bool send_mt(PeerNode& n, oob_wire::Message& m);  // fills the header
  void finish_pending_mt(uint64_t id, ConnResult r);
  void add_conn_mt(PeerNode& n, std::shared_ptr<ConnShared> c);
  void describe_connect_failure(Errc e, const std::string& node, uint16_t port) const;
  // Creates the ZeroMQ context and binds the ROUTER at sock_path_ (start()).
  Errc bind_router();
  void close_listener_mt(ListenerShared& l);
  void start_connect_mt(const std::string& node, uint16_t port, std::vector<std::byte> blob,
                        Deadline deadline, std::promise<ConnResult> promise);
  ConnResult accept_mt(const PendingRequest& req, std::vector<std::byte> blob);
  void reject_mt(const PendingRequest& req, oob_wire::RejectReason why);
  void send_disconnect_mt(PeerNode& n, const ConnShared& c);
  void teardown_mt();

  static constexpr std::size_t kMaxPeers = 1024;
  static constexpr std::size_t kMaxQueuedRequests = 1024;

  OobConfig cfg_;
  pid_t owner_pid_ = 0;
  uint64_t instance_ = 0;
  SipKey secret_{};  // never leaves this process; peers see only token_for(them)
  oob_wire::BootId boot_id_{};
  uint64_t pid_ns_ = 0;
  std::string lock_path_, sock_path_;
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
  std::map<std::string, PeerNode> nodes_;
  std::map<uint16_t, std::shared_ptr<ListenerShared>> listeners_;
  std::map<uint64_t, PendingConnect> pending_;
  uint64_t next_id_ = 1;
  bool torn_down_ = false;  // teardown started: callbacks may not add listeners or connections
  Clock::time_point next_heartbeat_{};
};

// Node-name lock and runtime directory helpers (also used by tests).
std::string default_runtime_dir();
// True if a live process holds <dir>/<node>.lock.
bool node_alive(const std::string& dir, const std::string& node);

}  // namespace clan::oob_detail
