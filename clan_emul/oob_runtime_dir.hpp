// The runtime directory, where the nodes of one user meet: its default, its
// checks, and the names of a node's files in it (<node>.lock, <node>.oob).
// Not part of the public API.
#pragma once

#include <cstddef>
#include <string>

#include "clan_emul/error.hpp"

namespace clan::oob_detail {

// The longest path a unix socket address holds.
inline constexpr std::size_t kSunPathMax = 107;

// $CLAN_RUNTIME_DIR, else /tmp/clanorb-<uid>.
std::string default_runtime_dir();
std::string lock_path(const std::string& dir, const std::string& node);
std::string sock_path(const std::string& dir, const std::string& node);
// Creates `dir` (mode 0700) if it does not exist and checks that it is a
// directory, and with `must_own` that it belongs to this user.
Errc ensure_dir(const std::string& dir, bool must_own);

}  // namespace clan::oob_detail
