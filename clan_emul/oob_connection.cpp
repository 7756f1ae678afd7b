#include "clan_emul/oob_connection.hpp"

#include "clan_emul/oob_core.hpp"

namespace clan {

OobConnection::OobConnection(std::shared_ptr<oob_detail::Core> core,
                             std::shared_ptr<oob_detail::ConnShared> s)
    : core_(std::move(core)), s_(std::move(s)) {}

OobConnection::~OobConnection() {
  // First: from here on the callback must never run.
  s_->forget_on_down();
  if (core_->in_owner_process() && s_->leave(OobState::kLocalClosed)) core_->local_disconnect(s_);
}

const std::vector<std::byte>& OobConnection::peer_blob() const { return s_->peer_blob; }
const std::string& OobConnection::peer_node() const { return s_->peer_node; }
const std::string& OobConnection::peer_address() const { return s_->peer_key; }
pid_t OobConnection::peer_pid() const { return s_->peer_pid; }
bool OobConnection::peer_on_this_host() const { return s_->on_this_host; }
const OobBootId& OobConnection::peer_boot_id() const { return s_->peer_boot_id; }
uint64_t OobConnection::id() const { return s_->id; }

OobState OobConnection::state() const { return s_->state.load(std::memory_order_acquire); }

Errc OobConnection::disconnect() {
  if (!core_->in_owner_process()) return Errc::kInvalidArgument;
  // The state changes here, at once; the manager thread sends DISCONNECT and
  // calls on_down.
  if (s_->leave(OobState::kLocalClosed)) {
    core_->local_disconnect(s_);
    return Errc::kOk;
  }
  return state() == OobState::kPeerDead ? Errc::kPeerDead : Errc::kClosed;
}

void OobConnection::set_on_down(std::function<void(OobState)> fn) { s_->set_on_down(std::move(fn)); }

Errc OobConnection::wait_down(Deadline deadline) { return s_->wait_down(deadline); }

}  // namespace clan
