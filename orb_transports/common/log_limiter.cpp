#include "orb_transports/common/log_limiter.hpp"

namespace clanorb {

std::optional<uint64_t> LogLimiter::admit(clan::Clock::time_point now) {
  std::lock_guard lock(mu_);
  if (logged_ && now - last_ < interval_) {
    ++held_back_;
    return std::nullopt;
  }
  logged_ = true;
  last_ = now;
  const uint64_t held = held_back_;
  held_back_ = 0;
  return held;
}

}  // namespace clanorb
