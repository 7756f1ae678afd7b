// The filter module (paper 002 sect. 3): examines a decoded header against
// what the receiver expects and adds the context the protocol engine needs
// (e.g. a received packet becomes an "out of sequence received packet").
// Stateless: the engine owns the expectations and passes them in.
#pragma once

#include <cstdint>

#include "omnitransport/header.hpp"
#include "omnitransport/state.hpp"

namespace otp {

// Internal-scope events (Table 1 TMO/SEQ refined into the cases of sect. 4.2).
enum class RxEvent : uint8_t {
  kInSequence,            // data of the current inbound call, pkt_seq == expected
  kRepeated,              // data already received (duplicate), or of an older call
  kOutOfSequence,         // data of the current call beyond expected: packets were dropped (SEQ)
  kNewCall,               // server: first packet (pkt_seq 0) of a call newer than the current one
  kNewCallMissingStart,   // server: packet of a newer call whose start was dropped (case vii)
  kStrayCall,             // client: data for a call newer than ours (the server cannot advance calls)
  kNack,
  kCallAck,
  kReclaim,
  kReclaimAck,
};

constexpr const char* to_string(RxEvent e) {
  switch (e) {
    case RxEvent::kInSequence: return "InSequence";
    case RxEvent::kRepeated: return "Repeated";
    case RxEvent::kOutOfSequence: return "OutOfSequence";
    case RxEvent::kNewCall: return "NewCall";
    case RxEvent::kNewCallMissingStart: return "NewCallMissingStart";
    case RxEvent::kStrayCall: return "StrayCall";
    case RxEvent::kNack: return "Nack";
    case RxEvent::kCallAck: return "CallAck";
    case RxEvent::kReclaim: return "Reclaim";
    case RxEvent::kReclaimAck: return "ReclaimAck";
  }
  return "?";
}

// Where the packet's call sits relative to the receiver's current inbound call.
enum class CallRel : uint8_t { kCurrent, kOlder, kNewer };

constexpr const char* to_string(CallRel r) {
  switch (r) {
    case CallRel::kCurrent: return "current";
    case CallRel::kOlder: return "older";
    case CallRel::kNewer: return "newer";
  }
  return "?";
}

// The receiver's expectations for inbound data.
struct RxExpect {
  uint8_t call = 0;       // current inbound call (client: its own call; server: last call seen)
  uint8_t next_pkt = 0;   // next expected packet sequence of that call
  bool complete = true;   // the COMPLETE packet of that call has been received
};

struct Classified {
  RxEvent event;
  CallRel rel;
  bool operator==(const Classified&) const = default;
};

Classified classify(const Header& h, const RxExpect& expect, Role receiver);

}  // namespace otp
