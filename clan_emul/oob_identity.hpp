// A node's identity on the wire: its name and pid, a random instance id per
// start (a node restarted under the same name is another incarnation), the
// host's boot id and the pid namespace (whether a peer's pid can be watched
// from here), and the secret from which it derives one token per peer.
// Not part of the public API.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "clan_emul/error.hpp"
#include "clan_emul/oob_wire.hpp"
#include "clan_emul/siphash.hpp"

namespace clan::oob_detail {

class NodeIdentity {
 public:
  // The calling process's identity as node `node`: a new instance id and
  // secret (kSystem if getrandom fails), the boot id and the pid namespace.
  static Result<NodeIdentity> create(std::string node);

  const std::string& node() const { return node_; }
  pid_t pid() const { return pid_; }
  // Our token for `peer`: SipHash-2-4 of its name under the secret, so each
  // peer learns only the token meant for it.
  oob_wire::Token token_for(const std::string& peer) const;
  // Fills the sender's fields of a frame to the peer that `token` is for.
  void stamp(oob_wire::Header& h, const oob_wire::Token& token) const;
  // The sender of `h` runs on this host (same boot id, when ours is known).
  bool same_host(const oob_wire::Header& h) const;
  // The sender of `h` runs in our pid namespace too: its pid means something
  // here (containers share boot ids).
  bool same_pid_namespace(const oob_wire::Header& h) const;

 private:
  NodeIdentity() = default;

  std::string node_;
  pid_t pid_ = 0;
  uint64_t instance_ = 0;
  SipKey secret_{};  // never leaves this process; peers see only token_for(them)
  oob_wire::BootId boot_id_{};
  uint64_t pid_ns_ = 0;
};

}  // namespace clan::oob_detail
