// A stringified IOR ("IOR:" and an even number of hex digits) to its octets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace clanorb::ior_tool {

// Leading and trailing white space is ignored, the prefix is case-blind as
// in omniORB. False, with `error` naming what is wrong, for anything else.
bool ior_octets(const std::string& text, std::vector<uint8_t>& out, std::string& error);

}  // namespace clanorb::ior_tool
