#include "clan_emul/replacement.hpp"

namespace clan {

const char* to_string(Replacement r) {
  switch (r) {
    case Replacement::kRandom:
      return "random";
    case Replacement::kLru:
      return "lru";
  }
  return "?";
}

size_t pick_victim(Replacement policy, const std::vector<FrameUse>& frames, uint64_t random_bits) {
  if (policy == Replacement::kRandom) return random_bits % frames.size();
  size_t oldest = 0;
  for (size_t i = 1; i < frames.size(); ++i) {
    if (frames[i].last_use < frames[oldest].last_use) oldest = i;
  }
  return oldest;
}

}  // namespace clan
