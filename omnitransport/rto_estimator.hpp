// The client's retransmission timeout, adapted to the round trips it
// measures (Jacobson and Karels; RFC 6298 sect. 2 and 5): a smoothed round
// trip and its mean deviation, RTO = SRTT + 4 RTTVAR, never below a floor
// (the configured RTO) nor above a ceiling (the backoff's). A round trip
// disturbed by a timeout says nothing certain (Karn): it is not sampled, and
// the RTO doubles instead and stays doubled until a clean round trip is
// measured.
//
// Why: a round trip here is a whole call, queueing at a busy server
// included. With more calls outstanding than the server's CPUs can turn
// round within a fixed RTO, a fixed RTO times out calls that are not lost,
// and each one's NACK, the resent reply and the acknowledgement of the
// duplicate are more work for the very CPUs that are behind (DESIGN.md).
#pragma once

#include <cstdint>

namespace otp {

class RtoEstimator {
 public:
  // floor_ns >= 1; a ceiling below the floor is raised to it.
  RtoEstimator(uint64_t floor_ns, uint64_t ceiling_ns);

  // A round trip that no timeout disturbed.
  void sample(uint64_t round_trip_ns);
  // A call that needed at least one timeout: the next call starts from twice
  // the RTO (at most the ceiling).
  void timed_out();

  uint64_t rto_ns() const { return rto_; }
  uint64_t smoothed_ns() const { return srtt_; }  // 0 before the first sample

 private:
  uint64_t floor_;
  uint64_t ceiling_;
  uint64_t srtt_ = 0;
  uint64_t rttvar_ = 0;
  uint64_t rto_;
};

}  // namespace otp
