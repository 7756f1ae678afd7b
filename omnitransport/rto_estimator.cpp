#include "omnitransport/rto_estimator.hpp"

#include <algorithm>

namespace otp {

RtoEstimator::RtoEstimator(uint64_t floor_ns, uint64_t ceiling_ns)
    : floor_(std::max<uint64_t>(floor_ns, 1)), ceiling_(std::max(ceiling_ns, floor_)), rto_(floor_) {}

void RtoEstimator::sample(uint64_t rtt) {
  if (srtt_ == 0) {
    srtt_ = std::max<uint64_t>(rtt, 1);
    rttvar_ = rtt / 2;
  } else {
    const uint64_t deviation = rtt > srtt_ ? rtt - srtt_ : srtt_ - rtt;
    rttvar_ = rttvar_ - rttvar_ / 4 + deviation / 4;  // beta = 1/4
    srtt_ = std::max<uint64_t>(srtt_ - srtt_ / 8 + rtt / 8, 1);  // alpha = 1/8
  }
  rto_ = std::clamp(srtt_ + 4 * rttvar_, floor_, ceiling_);
}

void RtoEstimator::timed_out() { rto_ = std::min(rto_ * 2, ceiling_); }

}  // namespace otp
