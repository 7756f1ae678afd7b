// An OobConfig made ready to start a node with: the runtime directory
// defaulted and created, $CLAN_PEER_TIMEOUT_MS and $CLAN_OOB_LISTEN applied,
// and every value checked (the listen address when it is bound), each
// failure in words. Not part of the public API.
#pragma once

#include "clan_emul/error.hpp"
#include "clan_emul/oob_manager.hpp"

namespace clan::oob_detail {

// kInvalidArgument for a bad name, timer or environment value, or a socket
// path too long; ensure_dir()'s errors for the runtime directory.
Errc resolve_config(OobConfig& cfg);

}  // namespace clan::oob_detail
