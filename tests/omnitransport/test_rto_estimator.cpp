// The client's adapted retransmission timeout (omnitransport/rto_estimator.hpp).
#include <catch2/catch.hpp>

#include "omnitransport/rto_estimator.hpp"

namespace otp::test {

namespace {
constexpr uint64_t kUs = 1'000;
constexpr uint64_t kMs = 1'000'000;
}  // namespace

TEST_CASE("RTO estimator: the floor until round trips say otherwise", "[otp][rto]") {
  RtoEstimator r(2 * kMs, 32 * kMs);
  CHECK(r.rto_ns() == 2 * kMs);
  CHECK(r.smoothed_ns() == 0);
  for (int i = 0; i < 10; ++i) r.sample(3 * kUs);  // quick calls: far below the floor
  CHECK(r.rto_ns() == 2 * kMs);
  CHECK(r.smoothed_ns() > 0);
  CHECK(r.smoothed_ns() < 10 * kUs);
}

TEST_CASE("RTO estimator: the first sample sets SRTT, RTTVAR half of it: RTO = 3 x the round trip", "[otp][rto]") {
  RtoEstimator r(1 * kMs, 32 * kMs);
  r.sample(2 * kMs);
  CHECK(r.smoothed_ns() == 2 * kMs);
  CHECK(r.rto_ns() == 2 * kMs + 4 * (1 * kMs));
}

TEST_CASE("RTO estimator: steady round trips above the floor: the RTO stays above them", "[otp][rto]") {
  RtoEstimator r(2 * kMs, 32 * kMs);
  for (int i = 0; i < 200; ++i) r.sample(i % 2 ? 2500 * kUs : 3500 * kUs);  // 3 ms +- 0.5 ms
  CHECK(r.smoothed_ns() > 2900 * kUs);
  CHECK(r.smoothed_ns() < 3100 * kUs);
  CHECK(r.rto_ns() > 3500 * kUs);  // above every round trip seen
  CHECK(r.rto_ns() < 6 * kMs);     // but tracks them: mean deviation, not the worst case
}

TEST_CASE("RTO estimator: the ceiling bounds it, also after timeouts", "[otp][rto]") {
  RtoEstimator r(2 * kMs, 32 * kMs);
  r.sample(100 * kMs);  // a slow servant
  CHECK(r.rto_ns() == 32 * kMs);
  r.timed_out();
  CHECK(r.rto_ns() == 32 * kMs);
}

TEST_CASE("RTO estimator: a timeout doubles the RTO until a clean round trip is measured", "[otp][rto]") {
  RtoEstimator r(2 * kMs, 32 * kMs);
  r.timed_out();
  CHECK(r.rto_ns() == 4 * kMs);
  r.timed_out();
  CHECK(r.rto_ns() == 8 * kMs);
  r.sample(3 * kUs);
  CHECK(r.rto_ns() == 2 * kMs);
}

TEST_CASE("RTO estimator: back to the floor once round trips are quick again", "[otp][rto]") {
  RtoEstimator r(2 * kMs, 32 * kMs);
  for (int i = 0; i < 50; ++i) r.sample(5 * kMs);
  CHECK(r.rto_ns() >= 5 * kMs);
  for (int i = 0; i < 60; ++i) r.sample(3 * kUs);
  CHECK(r.rto_ns() == 2 * kMs);
}

}  // namespace otp::test
