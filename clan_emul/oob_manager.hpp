// The out-of-band (OOB) connection manager of the emulated CLAN NIC: the
// datagram service used only for connection management (connect, accept with
// the cookies each side exports, disconnect) and for reporting peer death.
//
// Addressing: a node is a name unique on the host. Node <n> binds a ZeroMQ
// ROUTER at ipc://<runtime_dir>/<n>.oob and holds an OFD lock (fcntl
// F_OFD_SETLK, flock-like: owned by the open file, released by the kernel when
// the process dies) on <runtime_dir>/<n>.lock for its whole life. The lock, not
// the socket file, says whether a node is alive: ZeroMQ's ipc bind silently
// steals an existing path, and a dead node's files may linger.
// With OobConfig::listen (or $CLAN_OOB_LISTEN) it also binds a ROUTER at
// tcp://host:port, and nodes of any host reach it as NAME@HOST[:PORT]; a
// plain NAME is a node of the same runtime directory. A node reached over
// tcp is answered at the address its frames come from and the port they say
// it listens on, so a node that connects over tcp listens on tcp too.
// Outgoing messages to node <p> go over one DEALER connected to <p>'s ROUTER.
//
// Threading: one background thread per manager owns every ZeroMQ socket. API
// calls from user threads hand it commands (mutex-protected queue + eventfd
// wake-up polled by zmq_poll) and wait for the result where there is one.
//
// Peer death: on the same host (same boot id and pid namespace) each side
// watches the other's pid with a pidfd, and a peer is dead when its process
// exits (reported within milliseconds), never because it is slow or stopped.
// Heartbeats go every heartbeat_interval to every node we have a connection
// with; a peer whose pid cannot be watched is dead after peer_timeout of
// silence (a stopped peer, or a host down or cut off, is told apart from a
// dead one by nothing else). A peer reached over tcp whose process dies is
// dead within 500 ms while its host is up: its connection drops and its host
// refuses a connect to its address (oob_tcp.cpp). A stopped peer keeps its
// listening socket, so it is never declared dead that way. A frame naming a known node is believed only with that node's
// token for us (see DESIGN.md, "Identity"); others count in forged_dropped.
//
// Start removes the files of dead nodes from the runtime directory (a lock
// nobody holds), bounded, and safe against a node taking the name meanwhile.
//
// fork(): only the process that created a manager may use it. In a child, API
// calls return kInvalidArgument, the child does not hold the node name (the
// lock descriptor is closed in the child), and destroying the manager in the
// child releases nothing of the parent's (it only leaks memory).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "clan_emul/deadline.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/oob_connection.hpp"
#include "clan_emul/oob_listener.hpp"

namespace clan {

struct OobConfig {
  std::string node;         // unique on this host: [A-Za-z0-9._-]{1,64}, else kInvalidArgument
  std::string runtime_dir;  // empty = $CLAN_RUNTIME_DIR, else /tmp/clanorb-<uid> (created 0700)
  // A tcp address to listen on besides the runtime directory: "HOST:PORT",
  // or "HOST" for port 7460; HOST a dotted IPv4, a bracketed IPv6, a DNS
  // name or '*' (every interface); port 0 picks a free one (listen_port()
  // tells which). Empty: $CLAN_OOB_LISTEN, else no tcp.
  std::string listen;
  std::chrono::milliseconds heartbeat_interval{100};
  // A peer whose process cannot be watched (another host or pid namespace)
  // is dead after this long without traffic. $CLAN_PEER_TIMEOUT_MS (above
  // heartbeat_interval, at most 86400000) overrides it.
  std::chrono::milliseconds peer_timeout{30000};
};

inline constexpr std::size_t kOobMaxBlob = 64 * 1024;  // larger blobs: kInvalidArgument

// Counters of the manager thread, for tests and diagnostics.
struct OobStats {
  uint64_t malformed_dropped = 0;  // frames that failed validation
  uint64_t unknown_dropped = 0;    // well-formed messages from or about nodes/ids we don't know
  uint64_t forged_dropped = 0;     // messages naming a known node without its token or proof
  uint64_t send_dropped = 0;       // outgoing messages dropped (peer queue full)
  uint64_t peers = 0;              // peer node records held now
};

// One per emulated NIC (usually one per process). Thread-safe.
class OobManager {
 public:
  // kInvalidArgument: bad name/config, socket path too long, the runtime
  // directory is not a directory, or the listen address is malformed or not
  // one of this host's; kNotPermitted: the runtime directory belongs to
  // another user; kAddressInUse: a live process holds the node name, or the
  // tcp address is in use;
  // kSystem: a system call failed (mkdir, open, fcntl, eventfd, ZeroMQ's bind).
  // clan::error_message() says which, with the path and errno.
  static Result<std::unique_ptr<OobManager>> start(OobConfig cfg);

  // Disconnects every connection (peers see kClosed, ours become kLocalClosed),
  // fails pending calls with kClosed, refuses queued requests, stops the
  // thread, removes the node's files and releases the name. Bounded: the last
  // DISCONNECTs get at most 100 ms of ZMQ_LINGER, it never waits for a peer.
  ~OobManager();
  OobManager(const OobManager&) = delete;
  OobManager& operator=(const OobManager&) = delete;

  const std::string& node() const;
  const std::string& runtime_dir() const;
  OobStats stats() const;
  // How long a peer whose process cannot be watched may be silent.
  std::chrono::milliseconds peer_timeout() const;
  // The tcp address bound ("127.0.0.1:41234"; "0.0.0.0:7460" for '*') and
  // its port; empty and 0 when the node listens on no tcp.
  const std::string& listen_address() const;
  uint16_t listen_port() const;

  // kAddressInUse if the port is taken on this node.
  Result<std::unique_ptr<OobListener>> listen(uint16_t port);

  // `node` is "NAME" (this runtime directory) or "NAME@HOST[:PORT]" (tcp;
  // HOST a dotted IPv4, a bracketed IPv6 or a DNS name, resolved on the
  // caller's thread within the resolver's own timeouts, not the deadline;
  // PORT 1-65535, default 7460).
  // kRefused at once if no such node is alive, nothing listens at the
  // address, another node answers there, nobody listens on the port or the
  // request is rejected; kTimeout at the deadline; kPeerDead if the peer dies
  // meanwhile (seen within one heartbeat_interval: its name lock goes away);
  // kInvalidArgument for a malformed address, a blob above 64 KiB, or a tcp
  // address when this node listens on no tcp; kClosed if this manager stops
  // meanwhile; kWouldBlock if called from an on_down callback.
  Result<std::shared_ptr<OobConnection>> connect(const std::string& node, uint16_t port,
                                                 std::vector<std::byte> blob, Deadline deadline);

 private:
  explicit OobManager(std::shared_ptr<oob_detail::Core> core);
  std::shared_ptr<oob_detail::Core> core_;
};

}  // namespace clan
