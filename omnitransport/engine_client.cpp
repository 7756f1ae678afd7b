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
  const bool waiting = state_ == State::kWaitingForReply;
  switch (c.event) {
    case RxEvent::kInSequence:
      if (!waiting) {
        ++stats_.stray;  // a reply before the request is complete: not from a correct server
        return;
      }
      ack_all();  // any reply packet acknowledges the whole request
      if (rx_.next_pkt == 0) client_reply_started(now);
      deliver(Delivery::kData, payload, n, h.type == PacketType::kComplete, true);
      ++rx_.next_pkt;
      nacked_.reset();
      progress();
      if (h.type == PacketType::kComplete) {  // (vi) reply complete -> idle
        if (timed_out_in_call_) rto_.timed_out();  // the next call starts backed off (Karn)
        rx_.complete = true;
        state_ = State::kIdle;
        retx_due_.reset();
        last_reply_call_ = h.call_seq;
        ack_due_ = now + cfg_.ack_delay_ns;  // ack only if the client stays idle
      } else {
        retx_due_ = now + retx_interval();
      }
      return;
    case RxEvent::kOutOfSequence:  // error (i): out of sequence -> NACK from the first missing packet
      ++stats_.out_of_sequence;
      if (!waiting) {
        ++stats_.stray;
        return;
      }
      ack_all();
      if (nacked_ != rx_.next_pkt) {
        send_control(PacketType::kNack, rx_.call, rx_.next_pkt);
        nacked_ = rx_.next_pkt;
        retx_due_ = now + retx_interval();
      }
      return;
    case RxEvent::kRepeated:
      ++stats_.duplicates;
      // The server repeats a reply we completed: it missed our acknowledgement
      // (CALL_ACK lost, or the next call not yet sent). Ack it again.
      if (last_reply_call_ == h.call_seq && (state_ == State::kIdle || state_ == State::kOneWayInProgress) &&
          dup_response_allowed(now)) {
        send_control(PacketType::kCallAck, h.call_seq, 0);
        ack_due_.reset();
      }
      return;
    case RxEvent::kNewCall:
    case RxEvent::kNewCallMissingStart:
    case RxEvent::kStrayCall:
      ++stats_.stray;
      return;
    case RxEvent::kNack:  // error (ii): retransmit held buffers with pkt_seq >= nacked
      ++stats_.nacks_received;
      if (h.call_seq != tx_call_ || !tx_eo_ ||
          (state_ != State::kRequestInProgress && state_ != State::kWaitingForReply)) {
        ++stats_.stray;
        return;
      }
      ack_below(h.call_seq, h.pkt_seq);
      retransmit_from(h.call_seq, h.pkt_seq);
      pump(now);
      return;
    case RxEvent::kCallAck:  // the server has the whole request and is working on it
      ++stats_.call_acks_received;
      if (h.call_seq != tx_call_ || !waiting) {
        ++stats_.stray;
        return;
      }
      // Alive and working: the give-up count restarts, the backoff does not
      // (a long call draws NACKs at growing intervals, not one per rto).
      ack_all();
      retries_ = 0;
      retx_due_ = now + retx_interval();
      return;
    case RxEvent::kReclaim:  // the server's reply pool is exhausted: ack what we have
      if (c.rel != CallRel::kCurrent) {
        ++stats_.stray;
        return;
      }
      send_control(PacketType::kReclaimAck, rx_.call, rx_.next_pkt);
      if (waiting) {
        ack_all();
        retries_ = 0;
        retx_due_ = now + retx_interval();
      }
      return;
    case RxEvent::kReclaimAck:
      on_reclaim_ack(h, now);
      if (state_ == State::kWaitingForReply && !retx_due_) retx_due_ = now + retx_interval();
      return;
  }
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
      const uint8_t first = held_.empty() ? tx_next_pkt_ : held_.front().pkt;
      send_control(PacketType::kReclaim, tx_call_, first);
      retx_due_ = now + retx_interval();
    } else if (state_ == State::kWaitingForReply) {  // error (i): timeout -> NACK
      send_control(PacketType::kNack, rx_.call, rx_.next_pkt);
      nacked_ = rx_.next_pkt;
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
