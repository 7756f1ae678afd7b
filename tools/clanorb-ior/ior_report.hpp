// clanorb-ior's output: an IOR's profiles, each IIOP address, and each
// tagged component, clanorb's decoded with what a clanorb client on this
// host would make of them.
#pragma once

#include <ostream>

#include "tools/clanorb-ior/ior_structure.hpp"

namespace clanorb::ior_tool {

// Writes the report; returns the number of malformed clanorb components.
int print_ior(const Ior& ior, std::ostream& out);

}  // namespace clanorb::ior_tool
