// Server machines: exactly-once (paper 002 Fig. 4), one-way (Fig. 6) and
// server error handling (Fig. 8, sect. 4.2.2 cases i-vii). Transition table:
// DESIGN.md.
#include "omnitransport/engine.hpp"

namespace otp {

Errc Engine::server_send(const std::byte* data, size_t len, bool complete, uint64_t now) {
  if (state_ != State::kReplying) return Errc::kWrongState;
  queue_chunk(data, len, complete, true, now);
  if (complete) {  // (ii) reply complete -> idle, reply held until acknowledged
    state_ = State::kIdle;
    reply_complete_ = true;
    reply_completed_at_ = now;
    server_rearm(now);
  }
  return Errc::kOk;
}

// Timer policy: a RECLAIM is resent after rto; a complete reply is resent
// after ack_delay + rto (an idle client acks only after ack_delay), then
// after rto, 2 rto, 4 rto ... up to rto_max (the backoff) until acknowledged.
void Engine::server_rearm(uint64_t now) {
  if (reclaim_outstanding_) {
    retx_due_ = now + retx_interval();
  } else if (reply_complete_ && !held_.empty()) {
    retx_due_ = now + cfg_.ack_delay_ns + cfg_.rto_ns;
  } else {
    retx_due_.reset();
  }
}

// The held reply is acknowledged (CALL_ACK, or implicitly by a later call).
void Engine::release_reply() {
  ack_all();
  reply_complete_ = false;
  retx_due_.reset();
  progress();
}

// A one-way whose buffers were passed up loses its tail: ABORT (case v).
void Engine::abort_oneway_if_receiving() {
  if (state_ == State::kReceivingOneWay) {
    ++stats_.oneways_aborted;
    deliver(Delivery::kAbort, nullptr, 0, false, false);
  }
}

// The client is on a newer call we have not started: make it current,
// expecting its first packet.
void Engine::server_begin_unstarted(uint8_t call, bool eo) {
  release_reply();
  abort_oneway_if_receiving();
  rx_ = RxExpect{call, 0, false};
  rx_eo_ = eo;
  nacked_.reset();
  state_ = State::kIdle;
}

void Engine::server_rx(const Header& h, Classified c, const std::byte* payload, size_t n, uint64_t now) {
  // One handler per verdict of the filter, as libfabric's shm provider
  // dispatches each command through smr_progress_ops[]. Exhaustive (no
  // default): a new verdict does not compile without its handler.
  switch (c.event) {
    case RxEvent::kNewCall: return server_on_new_call(h, payload, n);
    case RxEvent::kNewCallMissingStart: return server_on_new_call_missing_start(h);
    case RxEvent::kInSequence: return server_on_in_sequence(h, payload, n);
    case RxEvent::kOutOfSequence: return server_on_out_of_sequence(h);
    case RxEvent::kRepeated: return server_on_repeated(h, c.rel, now);
    case RxEvent::kStrayCall: ++stats_.stray; return;  // the filter gives it to clients only
    case RxEvent::kNack: return server_on_nack(h, c.rel, now);
    case RxEvent::kCallAck: return server_on_call_ack(h);
    case RxEvent::kReclaim: return server_on_reclaim(h, c.rel);
    case RxEvent::kReclaimAck: return server_on_reclaim_ack(h, now);
  }
}

// (vi) The first packet of a newer call, maybe out of step (a one-way
// between was lost): proceed, the previous reply acknowledged implicitly.
void Engine::server_on_new_call(const Header& h, const std::byte* payload, size_t n) {
  if (!relevant(server_may_start_call())) return;
  server_begin_unstarted(h.call_seq, h.exactly_once);
  server_on_in_sequence(h, payload, n);
}

// (vii) A newer call whose start was dropped: a one-way is ignored; an
// exactly-once call is NACKed from its first packet (the previous reply
// acknowledged implicitly).
void Engine::server_on_new_call_missing_start(const Header& h) {
  if (!relevant(server_may_start_call())) return;
  server_begin_unstarted(h.call_seq, h.exactly_once);
  if (h.exactly_once) {
    nack_next_expected();
  } else {
    ++stats_.oneways_ignored;
    server_ignore_rest_of_oneway(h.type == PacketType::kComplete);
  }
}

// (i) The call's next packet: delivered; the first starts the call, the
// COMPLETE one ends the request.
void Engine::server_on_in_sequence(const Header& h, const std::byte* payload, size_t n) {
  const bool complete = h.type == PacketType::kComplete;
  if (server_drops_ignored_oneway(complete) || !relevant(h.exactly_once == rx_eo_)) return;
  if (state_ == State::kIdle) {  // (i) first packet of the call: processing starts
    ++stats_.calls;
    state_ = rx_eo_ ? State::kReceivingRequest : State::kReceivingOneWay;
  }
  deliver(Delivery::kData, payload, n, complete, rx_eo_);
  ++rx_.next_pkt;
  nacked_.reset();
  progress();
  if (complete) server_request_complete(h.call_seq);
}

// (v) A packet of the current call beyond a gap.
void Engine::server_on_out_of_sequence(const Header& h) {
  ++stats_.out_of_sequence;
  const bool complete = h.type == PacketType::kComplete;
  if (server_drops_ignored_oneway(complete) || !relevant(h.exactly_once == rx_eo_)) return;
  if (rx_eo_) {  // exactly-once, or (vii) start still missing: NACK, once per gap
    if (nacked_ != rx_.next_pkt) nack_next_expected();
  } else {  // one-way: no retransmission possible; abort what the strand has
    abort_oneway_if_receiving();
    server_ignore_rest_of_oneway(complete);
  }
}

// A retransmitted request for the call already handled: never delivered
// again; the held reply is given again, or the client is told we are
// working on it (rate-limited).
void Engine::server_on_repeated(const Header& h, CallRel rel, uint64_t now) {
  ++stats_.duplicates;
  const bool handled =
      rel == CallRel::kCurrent && rx_eo_ && rx_.complete && h.exactly_once && tx_call_ == h.call_seq;
  if (!handled || !dup_response_allowed(now)) return;
  if (state_ == State::kReplying) {
    send_control(PacketType::kCallAck, h.call_seq, 0);
  } else if (reply_complete_ && !held_.empty()) {
    retransmit_all();
  }
}

void Engine::server_on_nack(const Header& h, CallRel rel, uint64_t now) {
  ++stats_.nacks_received;
  if (rel == CallRel::kCurrent) return server_on_nack_current(h, now);
  if (!relevant(rel == CallRel::kNewer && server_may_start_call())) return;
  // (iv) a call not started: the client has our reply (ack and free it)
  // and its new request was lost: NACK it from the first packet.
  server_begin_unstarted(h.call_seq, true);
  nack_next_expected();
}

// (ii, iii) NACK for the current call: the client waits for its reply.
void Engine::server_on_nack_current(const Header& h, uint64_t now) {
  if (!rx_.complete) return nack_next_expected();  // but we miss part of its request
  if (!relevant(rx_eo_ && tx_call_ == h.call_seq)) return;
  // (iii) the call just handled: resend the reply from the packet named
  if (ack_below(h.call_seq, h.pkt_seq) != 0) progress();
  const size_t resent = retransmit_from(h.call_seq, h.pkt_seq);
  pump(now);
  if (resent == 0 && state_ == State::kReplying) {
    send_control(PacketType::kCallAck, h.call_seq, 0);  // request received, reply not ready yet
  }
}

void Engine::server_on_call_ack(const Header& h) {
  ++stats_.call_acks_received;
  if (relevant(h.call_seq == tx_call_ && reply_complete_)) release_reply();
}

void Engine::server_on_reclaim(const Header& h, CallRel rel) {
  if (rel == CallRel::kCurrent) return send_control(PacketType::kReclaimAck, rx_.call, rx_.next_pkt);
  if (!relevant(rel == CallRel::kNewer && server_may_start_call())) return;
  server_begin_unstarted(h.call_seq, true);  // like (iv): we have nothing of this call yet
  send_control(PacketType::kReclaimAck, h.call_seq, 0);
}

void Engine::server_on_reclaim_ack(const Header& h, uint64_t now) {
  on_reclaim_ack(h, now);
  if (state_ != State::kZombie && !retx_due_) server_rearm(now);
}

// The request is complete: an exactly-once call waits for its reply, a
// one-way is over.
void Engine::server_request_complete(uint8_t call) {
  rx_.complete = true;
  if (!rx_eo_) {
    state_ = State::kIdle;
    return;
  }
  state_ = State::kReplying;
  tx_call_ = call;
  tx_next_pkt_ = 0;
  tx_eo_ = true;
  reply_complete_ = false;
}

// A one-way whose start was lost, or that was aborted: the rest of it is
// dropped (IgnoringOneWay) until its COMPLETE packet.
void Engine::server_ignore_rest_of_oneway(bool complete) {
  state_ = complete ? State::kIdle : State::kIgnoringOneWay;
  if (complete) rx_.complete = true;
}

// In IgnoringOneWay a data packet of that call is dropped (true).
bool Engine::server_drops_ignored_oneway(bool complete) {
  if (state_ != State::kIgnoringOneWay) return false;
  server_ignore_rest_of_oneway(complete);
  return true;
}

void Engine::server_timer(uint64_t now) {
  if (!retx_due_ || now < *retx_due_) return;
  ++stats_.timeouts;
  if (no_progress(now)) return;  // retries exhausted: kBad, zombie
  back_off();
  if (reclaim_outstanding_) {
    send_reclaim(now);
  } else if (reply_complete_ && !held_.empty()) {  // (i) timeout: retransmit unacknowledged buffers
    retransmit_all();
    retx_due_ = now + retx_interval();
  } else {
    retx_due_.reset();  // idle client, everything acknowledged: nothing to do
  }
}

}  // namespace otp
