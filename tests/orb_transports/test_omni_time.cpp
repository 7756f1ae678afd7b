// omniORB deadlines (wall-clock, absolute) converted to fabric deadlines
// (monotonic) with a cached offset between the two clocks.
#include <catch2/catch.hpp>

#include <time.h>

#include <chrono>

#include "orb_transports/common/omni_time.hpp"

using clanorb::to_deadline;
using namespace std::chrono;

namespace {

// omniORB's deadline `ahead` from now on the wall clock.
omni_time_t wall_in(nanoseconds ahead) {
  timespec rt{};
  clock_gettime(CLOCK_REALTIME, &rt);
  const int64_t ns = (static_cast<int64_t>(rt.tv_sec) * 1'000'000'000 + rt.tv_nsec) + ahead.count();
  return omni_time_t(static_cast<unsigned long>(ns / 1'000'000'000),
                     static_cast<unsigned long>(ns % 1'000'000'000));
}

// How far in the future (monotonic) a deadline lies, from `now_ns`.
int64_t ahead_of(const clan::Deadline& d, uint64_t now_ns) {
  return duration_cast<nanoseconds>(d.when().time_since_epoch()).count() - static_cast<int64_t>(now_ns);
}

}  // namespace

TEST_CASE("deadline conversion: no omniORB deadline is no deadline, and reads no clock") {
  uint64_t now = 12345;
  const clan::Deadline d = to_deadline(omni_time_t(), &now);
  CHECK(d.is_never());
  CHECK(now == 0);
}

TEST_CASE("deadline conversion: a wall-clock deadline lands as far ahead on the monotonic clock") {
  // Twice: the first conversion may read the offset, the second uses the
  // cached one. Each lands within 50 ms of the 2 s asked for (the slack is
  // for a descheduled test thread, not for the conversion).
  for (int i = 0; i < 2; ++i) {
    uint64_t now = 0;
    const clan::Deadline d = to_deadline(wall_in(seconds(2)), &now);
    REQUIRE(now != 0);
    CHECK(now <= clan::now_ns());
    const int64_t ahead = ahead_of(d, now);
    CHECK(ahead <= 2'000'000'000);
    CHECK(ahead > 1'950'000'000);
    CHECK_FALSE(d.expired());
  }
}

TEST_CASE("deadline conversion: a deadline in the past has expired") {
  uint64_t now = 0;
  const clan::Deadline d = to_deadline(wall_in(-seconds(5)), &now);
  CHECK(d.expired());
  CHECK(ahead_of(d, now) == 0);
}

TEST_CASE("deadline conversion: a stale clock offset is read again") {
  // Pretend the cached offset, taken long ago, is a minute wrong (as after a
  // step of the wall clock): the next conversion must not use it.
  namespace detail = clanorb::omni_time_detail;
  (void)to_deadline(wall_in(seconds(1)));
  const int64_t good = detail::offset_ns.load();
  detail::offset_ns.store(good + 60'000'000'000);
  detail::offset_read_at.store(static_cast<int64_t>(clan::now_ns()) - 2 * detail::kRefreshNs);
  uint64_t now = 0;
  const clan::Deadline d = to_deadline(wall_in(seconds(2)), &now);
  CHECK(ahead_of(d, now) > 1'950'000'000);
  CHECK(ahead_of(d, now) <= 2'000'000'000);
  CHECK(detail::offset_ns.load() - good < 1'000'000);
  CHECK(good - detail::offset_ns.load() < 1'000'000);
}
