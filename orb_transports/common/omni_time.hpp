// omniORB deadlines (absolute CLOCK_REALTIME, zero = none) as fabric deadlines.
#pragma once

#include <time.h>

#include <omniORB4/CORBA.h>

#include "clan_emul/deadline.hpp"

namespace clanorb {

inline clan::Deadline to_deadline(const omni_time_t& t) {
  if (!t) return clan::Deadline::never();
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  const int64_t left_ns = (static_cast<int64_t>(t.s) - now.tv_sec) * 1'000'000'000 +
                          (static_cast<int64_t>(t.ns) - now.tv_nsec);
  return clan::Deadline::after(std::chrono::nanoseconds(left_ns > 0 ? left_ns : 0));
}

}  // namespace clanorb
