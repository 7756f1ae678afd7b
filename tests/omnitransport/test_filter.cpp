#include <catch2/catch.hpp>

#include "omnitransport/filter.hpp"

namespace otp::test {

namespace {
Header data(uint8_t call, uint8_t seq, PacketType t = PacketType::kPartial) {
  Header h;
  h.type = t;
  h.exactly_once = true;
  h.call_seq = call;
  h.pkt_seq = seq;
  return h;
}
}  // namespace

TEST_CASE("filter: classifies data against the receiver's expectations", "[otp][filter]") {
  struct Row {
    const char* name;
    Role role;
    RxExpect expect;
    Header h;
    Classified want;
  };
  const Row rows[] = {
      {"in sequence", Role::kServer, {5, 3, false}, data(5, 3), {RxEvent::kInSequence, CallRel::kCurrent}},
      {"repeated packet", Role::kServer, {5, 3, false}, data(5, 2), {RxEvent::kRepeated, CallRel::kCurrent}},
      {"gap", Role::kServer, {5, 3, false}, data(5, 5), {RxEvent::kOutOfSequence, CallRel::kCurrent}},
      {"call complete: repeat", Role::kServer, {5, 3, true}, data(5, 3), {RxEvent::kRepeated, CallRel::kCurrent}},
      {"older call", Role::kServer, {5, 0, true}, data(4, 0), {RxEvent::kRepeated, CallRel::kOlder}},
      {"new call", Role::kServer, {5, 0, true}, data(6, 0), {RxEvent::kNewCall, CallRel::kNewer}},
      {"out-of-step new call", Role::kServer, {5, 0, true}, data(9, 0), {RxEvent::kNewCall, CallRel::kNewer}},
      {"new call, start lost", Role::kServer, {5, 0, true}, data(6, 2),
       {RxEvent::kNewCallMissingStart, CallRel::kNewer}},
      {"client: newer call is stray", Role::kClient, {5, 0, false}, data(6, 0),
       {RxEvent::kStrayCall, CallRel::kNewer}},
      {"call wrap 255 -> 0 is newer", Role::kServer, {255, 0, true}, data(0, 0), {RxEvent::kNewCall, CallRel::kNewer}},
      {"pkt wrap in sequence", Role::kClient, {7, 0, false}, data(7, 0), {RxEvent::kInSequence, CallRel::kCurrent}},
      {"pkt wrap: 255 before 0 is repeat", Role::kClient, {7, 0, false}, data(7, 255),
       {RxEvent::kRepeated, CallRel::kCurrent}},
  };
  for (const Row& r : rows) {
    INFO(r.name);
    CHECK(classify(r.h, r.expect, r.role) == r.want);
  }
}

TEST_CASE("filter: control types keep their call relation", "[otp][filter]") {
  Header h = data(6, 1, PacketType::kNack);
  CHECK(classify(h, {5, 0, true}, Role::kServer) == Classified{RxEvent::kNack, CallRel::kNewer});
  h.type = PacketType::kCallAck;
  h.call_seq = 5;
  CHECK(classify(h, {5, 0, true}, Role::kServer) == Classified{RxEvent::kCallAck, CallRel::kCurrent});
  h.type = PacketType::kReclaim;
  h.call_seq = 4;
  CHECK(classify(h, {5, 0, true}, Role::kClient) == Classified{RxEvent::kReclaim, CallRel::kOlder});
  h.type = PacketType::kReclaimAck;
  CHECK(classify(h, {4, 0, true}, Role::kClient).event == RxEvent::kReclaimAck);
}

}  // namespace otp::test
