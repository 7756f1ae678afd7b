// The state the OOB manager's thread shares with the user's objects: a
// connection (ConnShared, behind an OobConnection), a listener's queue
// (ListenerShared, behind an OobListener) and the requests waiting in it
// (PendingRequest, behind an OobRequest). Not part of the public API.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "clan_emul/deadline.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/oob_address.hpp"
#include "clan_emul/oob_connection.hpp"
#include "clan_emul/oob_wire.hpp"

namespace clan::oob_detail {

// Shared by an OobConnection and the manager thread.
struct ConnShared {
  // Immutable after creation.
  uint64_t id = 0;       // ours
  uint64_t peer_id = 0;  // the peer's id for the same connection
  std::string peer_node;     // its name
  // Its address, NAME or NAME@HOST:PORT over tcp: its record's key in the peer table.
  std::string peer_key;
  uint64_t peer_instance = 0;
  pid_t peer_pid = 0;
  oob_wire::BootId peer_boot_id{};
  bool on_this_host = false;  // same boot id and pid namespace
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
  PeerAddress from;           // where it came from
  std::string address;        // NAME, or NAME@HOST:PORT over tcp
  bool on_this_host = false;  // same boot id and pid namespace
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

}  // namespace clan::oob_detail
