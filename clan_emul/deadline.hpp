// Absolute deadlines on CLOCK_MONOTONIC, so that waits compose: a call that
// waits in several steps passes the same deadline down.
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>

namespace clan {

using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC on Linux

class Deadline {
 public:
  static Deadline never() { return Deadline(Clock::time_point::max()); }
  static Deadline now() { return Deadline(Clock::now()); }
  static Deadline after(std::chrono::nanoseconds d) { return Deadline(Clock::now() + d); }
  // Already expired, like now(), without reading the clock: for a wait that
  // must not wait (reading the clock costs as much as a small send).
  static Deadline already_expired() { return Deadline(Clock::time_point{}); }
  explicit Deadline(Clock::time_point t) : t_(t) {}

  bool is_never() const { return t_ == Clock::time_point::max(); }
  bool expired() const { return !is_never() && Clock::now() >= t_; }
  Clock::time_point when() const { return t_; }
  // For futex(FUTEX_WAIT_BITSET) and similar: absolute CLOCK_MONOTONIC time.
  timespec to_timespec() const {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t_.time_since_epoch()).count();
    return timespec{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  }
  // Milliseconds left, clamped to [0, INT_MAX]; -1 for never (zmq_poll style).
  int remaining_ms() const;

 private:
  Clock::time_point t_;
};

inline int Deadline::remaining_ms() const {
  if (is_never()) return -1;
  auto left = std::chrono::ceil<std::chrono::milliseconds>(t_ - Clock::now()).count();
  if (left < 0) return 0;
  return left > 0x7fffffff ? 0x7fffffff : static_cast<int>(left);
}

inline uint64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

}  // namespace clan
