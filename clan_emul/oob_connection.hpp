// One out-of-band connection between two nodes, as made by OobManager::connect
// or OobRequest::accept. It carries no data: it is the handshake result (the
// peer's blob, i.e. its RDMA cookies) plus a liveness signal that upper layers
// use to tear down the shared-memory channel built on it.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "clan_emul/deadline.hpp"
#include "clan_emul/error.hpp"

namespace clan {

namespace oob_detail {
class Core;
struct ConnShared;
}  // namespace oob_detail

// A host's identity: its /proc/sys/kernel/random/boot_id, all zeros if unknown.
using OobBootId = std::array<uint8_t, 16>;

enum class OobState : uint8_t {
  kConnected,
  kClosed,       // the peer disconnected in order (or its manager was destroyed)
  kPeerDead,     // the peer process died or went silent for peer_timeout
  kLocalClosed,  // we disconnected (or our manager was destroyed)
};

// Switch without default: the compiler reports a missing case.
constexpr const char* to_string(OobState s) {
  switch (s) {
    case OobState::kConnected: return "connected";
    case OobState::kClosed: return "closed by peer";
    case OobState::kPeerDead: return "peer dead";
    case OobState::kLocalClosed: return "closed locally";
  }
  return "unknown";
}

// Thread-safe: every member may be called from any thread of the process that
// created the manager. Destroying the last reference disconnects (orderly).
class OobConnection {
 public:
  ~OobConnection();
  OobConnection(const OobConnection&) = delete;
  OobConnection& operator=(const OobConnection&) = delete;

  const std::vector<std::byte>& peer_blob() const;
  const std::string& peer_node() const;  // its name
  // NAME for a node of this runtime directory, NAME@HOST:PORT (numeric) for
  // one reached over tcp.
  const std::string& peer_address() const;
  pid_t peer_pid() const;  // meaningful only when peer_on_this_host()
  // Same boot id and pid namespace: shared memory with the peer can work.
  // Otherwise the peer is on another host (or behind a pid namespace), and
  // only the wire reaches it.
  bool peer_on_this_host() const;
  const OobBootId& peer_boot_id() const;  // the peer's host identity
  uint64_t id() const;                    // local connection id, unique within the manager

  OobState state() const;  // lock-free read

  // Orderly: the peer's state becomes kClosed, ours kLocalClosed (at once).
  // kClosed / kPeerDead if the connection was already down.
  Errc disconnect();

  // Called exactly once, on the manager thread, when the state leaves
  // kConnected for any reason; called at once on the caller's thread if the
  // state already has. A later call replaces an earlier, not yet called
  // function (only one of them runs). Never called after this object is
  // destroyed (the destructor waits for a call in progress on another
  // thread). On the manager thread it must be short: it may call any OOB
  // function except OobManager::connect (kWouldBlock there) and must not
  // destroy the OobManager.
  void set_on_down(std::function<void(OobState)> fn);

  // Blocks until state() != kConnected: kOk, or kTimeout at the deadline.
  Errc wait_down(Deadline deadline);

  // Internal: made by the manager.
  OobConnection(std::shared_ptr<oob_detail::Core> core, std::shared_ptr<oob_detail::ConnShared> s);

 private:
  std::shared_ptr<oob_detail::Core> core_;
  std::shared_ptr<oob_detail::ConnShared> s_;
};

}  // namespace clan
