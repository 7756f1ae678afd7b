#include "omnitransport/filter.hpp"

namespace otp {

Classified classify(const Header& h, const RxExpect& e, Role receiver) {
  const CallRel rel = h.call_seq == e.call ? CallRel::kCurrent
                      : seq_lt(e.call, h.call_seq) ? CallRel::kNewer
                                                   : CallRel::kOlder;
  switch (h.type) {
    case PacketType::kNack: return {RxEvent::kNack, rel};
    case PacketType::kCallAck: return {RxEvent::kCallAck, rel};
    case PacketType::kReclaim: return {RxEvent::kReclaim, rel};
    case PacketType::kReclaimAck: return {RxEvent::kReclaimAck, rel};
    case PacketType::kPartial:
    case PacketType::kComplete: break;
  }
  switch (rel) {
    case CallRel::kOlder: return {RxEvent::kRepeated, rel};
    case CallRel::kNewer:
      // Only the client advances the call sequence (sect. 4.2.2).
      if (receiver == Role::kClient) return {RxEvent::kStrayCall, rel};
      return {h.pkt_seq == 0 ? RxEvent::kNewCall : RxEvent::kNewCallMissingStart, rel};
    case CallRel::kCurrent: break;
  }
  if (e.complete) return {RxEvent::kRepeated, rel};
  const int d = seq_diff(h.pkt_seq, e.next_pkt);
  if (d == 0) return {RxEvent::kInSequence, rel};
  if (d < 0) return {RxEvent::kRepeated, rel};
  return {RxEvent::kOutOfSequence, rel};
}

}  // namespace otp
