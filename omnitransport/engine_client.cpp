// Client machines: exactly-once (paper 002 Fig. 3), one-way (Fig. 5) and
// client error handling (Fig. 7, sect. 4.2.1). Transition table: DESIGN.md.
#include "omnitransport/engine.hpp"

namespace otp {

Errc Engine::client_send(const std::byte* data, size_t len, bool complete, bool eo, uint64_t now) {
  switch (state_) {
    case State::kIdle:
      // A new call: call N+1 implicitly acknowledges the reply of call N.
      ++tx_call_;
      tx_next_pkt_ = 0;
      tx_eo_ = eo;
      ack_due_.reset();
      timed_out_in_call_ = false;
      progress();
      ++stats_.calls;
      if (eo) {
        rx_ = RxExpect{tx_call_, 0, false};
        rx_eo_ = true;
        nacked_.reset();
      }
      break;
    case State::kRequestInProgress:
      if (!eo) return Errc::kWrongState;
      break;
    case State::kOneWayInProgress:
      if (eo) return Errc::kWrongState;
      break;
    case State::kWaitingForReply:
    case State::kReceivingRequest:
    case State::kReceivingOneWay:
    case State::kIgnoringOneWay:
    case State::kReplying:
      return Errc::kWrongState;
    case State::kZombie:
      return Errc::kZombie;
  }
  queue_chunk(data, len, complete, eo, now);
  if (eo) {
    state_ = complete ? State::kWaitingForReply : State::kRequestInProgress;
    if (complete) request_done_at_ = now;
    if (complete && !reclaim_outstanding_) retx_due_ = now + rto_.rto_ns();
  } else {
    state_ = complete ? State::kIdle : State::kOneWayInProgress;
  }
  return Errc::kOk;
}

void Engine::client_rx(const Header& h, Classified c, const std::byte* payload, size_t n, uint64_t now) {
  // One handler per verdict of the filter (see server_rx). Exhaustive.
  switch (c.event) {
    case RxEvent::kInSequence: return client_on_in_sequence(h, payload, n, now);
    case RxEvent::kOutOfSequence: return client_on_out_of_sequence(now);
    case RxEvent::kRepeated: return client_on_repeated(h, now);
    case RxEvent::kNewCall:
    case RxEvent::kNewCallMissingStart:
    case RxEvent::kStrayCall: ++stats_.stray; return;  // only the client starts calls
    case RxEvent::kNack: return client_on_nack(h, now);
    case RxEvent::kCallAck: return client_on_call_ack(h, now);
    case RxEvent::kReclaim: return client_on_reclaim(c.rel, now);
    case RxEvent::kReclaimAck: return client_on_reclaim_ack(h, now);
  }
}

// (v) The reply's next packet: delivered; it acknowledges the whole request.
// A reply before the request is complete is not from a correct server.
void Engine::client_on_in_sequence(const Header& h, const std::byte* payload, size_t n, uint64_t now) {
  if (!relevant(state_ == State::kWaitingForReply)) return;
  ack_all();
  if (rx_.next_pkt == 0) client_reply_started(now);
  const bool complete = h.type == PacketType::kComplete;
  deliver(Delivery::kData, payload, n, complete, true);
  ++rx_.next_pkt;
  nacked_.reset();
  progress();
  if (complete) {
    client_reply_complete(h.call_seq, now);
  } else {
    retx_due_ = now + retx_interval();
  }
}

// (vi) The reply is complete: idle, acknowledged only if the client stays
// idle (the next call acknowledges it implicitly).
void Engine::client_reply_complete(uint8_t call, uint64_t now) {
  if (timed_out_in_call_) rto_.timed_out();  // the next call starts backed off (Karn)
  rx_.complete = true;
  state_ = State::kIdle;
  retx_due_.reset();
  last_reply_call_ = call;
  ack_due_ = now + cfg_.ack_delay_ns;
}

// Error (i): a reply packet beyond a gap: NACK from the first missing
// packet, once per gap.
void Engine::client_on_out_of_sequence(uint64_t now) {
  ++stats_.out_of_sequence;
  if (!relevant(state_ == State::kWaitingForReply)) return;
  ack_all();
  if (nacked_ == rx_.next_pkt) return;
  nack_next_expected();
  retx_due_ = now + retx_interval();
}

// The server repeats a reply we completed: it missed our acknowledgement
// (CALL_ACK lost, or the next call not yet sent). Ack it again.
void Engine::client_on_repeated(const Header& h, uint64_t now) {
  ++stats_.duplicates;
  const bool between_calls = state_ == State::kIdle || state_ == State::kOneWayInProgress;
  if (last_reply_call_ != h.call_seq || !between_calls || !dup_response_allowed(now)) return;
  send_control(PacketType::kCallAck, h.call_seq, 0);
  ack_due_.reset();
}

// Error (ii): retransmit the held buffers from the NACKed packet on.
void Engine::client_on_nack(const Header& h, uint64_t now) {
  ++stats_.nacks_received;
  const bool sending = state_ == State::kRequestInProgress || state_ == State::kWaitingForReply;
  if (!relevant(h.call_seq == tx_call_ && tx_eo_ && sending)) return;
  ack_below(h.call_seq, h.pkt_seq);
  retransmit_from(h.call_seq, h.pkt_seq);
  pump(now);
}

// The server has the whole request and is working on it.
void Engine::client_on_call_ack(const Header& h, uint64_t now) {
  ++stats_.call_acks_received;
  if (!relevant(h.call_seq == tx_call_ && state_ == State::kWaitingForReply)) return;
  client_server_working(now);
}

// The server's reply pool is exhausted: ack what we have.
void Engine::client_on_reclaim(CallRel rel, uint64_t now) {
  if (!relevant(rel == CallRel::kCurrent)) return;
  send_control(PacketType::kReclaimAck, rx_.call, rx_.next_pkt);
  if (state_ == State::kWaitingForReply) client_server_working(now);
}

void Engine::client_on_reclaim_ack(const Header& h, uint64_t now) {
  on_reclaim_ack(h, now);
  if (state_ == State::kWaitingForReply && !retx_due_) retx_due_ = now + retx_interval();
}

// The server is alive and has our request: the give-up count restarts, the
// backoff does not (a long call draws NACKs at growing intervals, not one
// per rto).
void Engine::client_server_working(uint64_t now) {
  ack_all();
  retries_ = 0;
  retx_due_ = now + retx_interval();
}

void Engine::client_timer(uint64_t now) {
  if (ack_due_ && now >= *ack_due_) {  // idle client: acknowledge the last reply (sect. 4.1)
    ack_due_.reset();
    if (last_reply_call_) send_control(PacketType::kCallAck, *last_reply_call_, 0);
  }
  if (retx_due_ && now >= *retx_due_) {
    ++stats_.timeouts;
    timed_out_in_call_ = true;
    if (no_progress(now)) return;  // error (iii): retries exhausted -> kBad, zombie
    back_off();
    if (reclaim_outstanding_) {
      send_reclaim(now);
    } else if (state_ == State::kWaitingForReply) {  // error (i): timeout -> NACK
      nack_next_expected();
      retx_due_ = now + retx_interval();
    } else {
      retx_due_.reset();
    }
  }
}

// Karn: a reply that came after a timeout may answer the NACK rather than
// the request, so its round trip is not sampled (the RTO doubles instead,
// once the call is over). Round trips are measured to the reply's first
// packet, which is what the retransmission timer waits for (a large reply's
// transfer is not).
void Engine::client_reply_started(uint64_t now) {
  if (!timed_out_in_call_ && now >= request_done_at_) rto_.sample(now - request_done_at_);
}

}  // namespace otp
