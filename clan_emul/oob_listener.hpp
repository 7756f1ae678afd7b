// Passive side of the out-of-band handshake: a listener on a port of this
// node, and the connection requests it receives.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "clan_emul/deadline.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/oob_connection.hpp"

namespace clan {

namespace oob_detail {
class Core;
struct ListenerShared;
struct PendingRequest;
}  // namespace oob_detail

// A connection request received by a listener. Movable, not copyable.
// Destroying it without accept() or reject() rejects it.
class OobRequest {
 public:
  OobRequest(OobRequest&& o) noexcept;
  OobRequest& operator=(OobRequest&& o) noexcept;
  OobRequest(const OobRequest&) = delete;
  OobRequest& operator=(const OobRequest&) = delete;
  ~OobRequest();

  const std::vector<std::byte>& peer_blob() const;
  const std::string& peer_node() const;
  const std::string& peer_address() const;  // as OobConnection's
  pid_t peer_pid() const;
  bool peer_on_this_host() const;  // as OobConnection's
  OobBootId peer_boot_id() const;

  // kInvalidArgument: blob above 64 KiB or request already answered;
  // kPeerDead: the requester died meanwhile; kClosed: the manager stopped.
  Result<std::shared_ptr<OobConnection>> accept(std::vector<std::byte> blob);
  void reject();  // the requester's connect() returns kRefused

  // Internal: made by OobListener.
  OobRequest(std::shared_ptr<oob_detail::Core> core, std::unique_ptr<oob_detail::PendingRequest> r);

 private:
  std::shared_ptr<oob_detail::Core> core_;
  std::unique_ptr<oob_detail::PendingRequest> r_;  // null once answered or moved from
};

// Thread-safe. Destroying it stops listening; requests still queued are refused.
class OobListener {
 public:
  ~OobListener();
  OobListener(const OobListener&) = delete;
  OobListener& operator=(const OobListener&) = delete;

  uint16_t port() const;
  // kTimeout at the deadline; kClosed once the manager has stopped or
  // close() was called.
  Result<OobRequest> next_request(Deadline deadline);
  // Stops listening now: queued and later requests are refused (the
  // requester sees no listener), and a thread in next_request returns
  // kClosed. The destructor does the same.
  void close();

  // Internal: made by the manager.
  OobListener(std::shared_ptr<oob_detail::Core> core, std::shared_ptr<oob_detail::ListenerShared> s);

 private:
  std::shared_ptr<oob_detail::Core> core_;
  std::shared_ptr<oob_detail::ListenerShared> s_;
};

}  // namespace clan
