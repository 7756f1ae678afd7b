// Reclaiming the files of dead nodes in the runtime directory. A killed
// node leaves <node>.lock and <node>.oob behind; a node that starts removes
// those whose lock nobody holds. Not part of the public API.
#pragma once

#include <cstddef>
#include <string>

namespace clan::oob_detail {

// Bounds on one sweep's cost: entries read, and dead nodes removed.
inline constexpr std::size_t kSweepMaxEntries = 4096;
inline constexpr std::size_t kSweepMaxNodes = 256;

// Removes the files of the dead nodes of `dir`, never `self`'s. Each dead
// node's lock is taken (F_OFD_SETLK) before its files are unlinked, so a node
// that holds or takes the name meanwhile keeps it. Returns how many nodes'
// files it removed. Best effort: a file it cannot open or lock is left.
std::size_t sweep_stale_nodes(const std::string& dir, const std::string& self);

}  // namespace clan::oob_detail
