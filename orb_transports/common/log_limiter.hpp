// Lets a kind of log line through at most once per interval, counting the
// ones held back, so that a flood (a client refused a thousand times a
// second) cannot fill the log yet none goes unmentioned: the next line let
// through says how many were held back since the last. Time is passed in,
// so tests need no clock. Thread-safe; for slow paths only (it locks).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>

#include "clan_emul/deadline.hpp"

namespace clanorb {

class LogLimiter {
 public:
  explicit LogLimiter(std::chrono::nanoseconds interval) : interval_(interval) {}

  // A line is due at `now`: nullopt if it is held back (and counted), else
  // how many were held back since the last one let through.
  std::optional<uint64_t> admit(clan::Clock::time_point now);

 private:
  const std::chrono::nanoseconds interval_;
  std::mutex mu_;
  bool logged_ = false;
  clan::Clock::time_point last_{};
  uint64_t held_back_ = 0;
};

}  // namespace clanorb
