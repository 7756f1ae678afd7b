// omniORB deadlines (absolute CLOCK_REALTIME, zero = none) as fabric deadlines.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>

#include <omniORB4/CORBA.h>

#include "clan_emul/deadline.hpp"

namespace clanorb {

namespace omni_time_detail {
// CLOCK_REALTIME minus CLOCK_MONOTONIC, and when (monotonic ns) it was read.
// Every Send and Recv converts a deadline: reading both clocks each time
// cost a clock read (about 25 ns here) per call on each side. The offset is
// read again once it is older than kRefreshNs, so a step of the wall clock
// moves deadlines at most that long. Threads refreshing it at once only
// store one of two good readings.
inline std::atomic<int64_t> offset_ns{0};
inline std::atomic<int64_t> offset_read_at{INT64_MIN};
constexpr int64_t kRefreshNs = 100'000'000;

inline int64_t realtime_offset(int64_t mono_ns) {
  const int64_t at = offset_read_at.load(std::memory_order_relaxed);
  if (at != INT64_MIN && mono_ns - at < kRefreshNs) return offset_ns.load(std::memory_order_relaxed);
  timespec rt{};
  clock_gettime(CLOCK_REALTIME, &rt);
  const int64_t off = (static_cast<int64_t>(rt.tv_sec) * 1'000'000'000 + rt.tv_nsec) - mono_ns;
  offset_ns.store(off, std::memory_order_relaxed);
  offset_read_at.store(mono_ns, std::memory_order_relaxed);
  return off;
}
}  // namespace omni_time_detail

// `now_ns`, if given, receives the monotonic time read for the conversion
// (clan::now_ns()'s clock), or 0 when there is no deadline and none was read.
inline clan::Deadline to_deadline(const omni_time_t& t, uint64_t* now_ns = nullptr) {
  if (!t) {
    if (now_ns) *now_ns = 0;
    return clan::Deadline::never();
  }
  const auto mono = clan::Clock::now();
  const int64_t mono_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(mono.time_since_epoch()).count();
  if (now_ns) *now_ns = static_cast<uint64_t>(mono_ns);
  const int64_t due_rt = static_cast<int64_t>(t.s) * 1'000'000'000 + static_cast<int64_t>(t.ns);
  const int64_t left_ns = due_rt - omni_time_detail::realtime_offset(mono_ns) - mono_ns;
  return clan::Deadline(mono + std::chrono::nanoseconds(left_ns > 0 ? left_ns : 0));
}

}  // namespace clanorb
