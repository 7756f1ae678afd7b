// Replacement policies for the resident set: which resident endpoint gives
// up its frame (paper 004 sect. 4.2 replaces at random; LRU is the other
// classic page-replacement answer, measured against it by bench_contention).
#pragma once

#include <cstdint>
#include <vector>

#include "clan_emul/endpoint.hpp"

namespace clan {

// What the policy knows of one resident endpoint.
struct FrameUse {
  uint32_t endpoint;
  uint64_t last_use;  // the re-mapping thread's tick at its last sampled use
};

// The position in `frames` of the endpoint to evict; `frames` is not empty.
// `random_bits` is a fresh random number (for kRandom).
size_t pick_victim(Replacement policy, const std::vector<FrameUse>& frames, uint64_t random_bits);

}  // namespace clan
