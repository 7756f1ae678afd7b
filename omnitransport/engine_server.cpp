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
  const bool complete_pkt = h.type == PacketType::kComplete;
  switch (c.event) {
    case RxEvent::kNewCall:
    case RxEvent::kNewCallMissingStart:
      // Only a client that has the whole reply advances the call sequence.
      if (state_ == State::kReplying) {
        ++stats_.stray;
        return;
      }
      server_begin_unstarted(h.call_seq, h.exactly_once);  // implicit ack of the previous reply
      if (c.event == RxEvent::kNewCallMissingStart) {      // (vii) dropped start of a call
        if (!h.exactly_once) {
          ++stats_.oneways_ignored;
          state_ = complete_pkt ? State::kIdle : State::kIgnoringOneWay;
          if (complete_pkt) rx_.complete = true;
        } else {  // ack previous (done above) + NACK from the first packet
          send_control(PacketType::kNack, h.call_seq, 0);
          nacked_ = 0;
        }
        return;
      }
      break;  // (vi) first packet of a newer call (maybe out of step): proceed
    default:
      break;
  }

  switch (c.event) {
    case RxEvent::kNewCall:
    case RxEvent::kInSequence:
      if (state_ == State::kIgnoringOneWay) {
        if (complete_pkt) {
          rx_.complete = true;
          state_ = State::kIdle;
        }
        return;
      }
      if (h.exactly_once != rx_eo_) {
        ++stats_.stray;
        return;
      }
      if (state_ == State::kIdle) {  // (i) first packet of the call: processing starts
        ++stats_.calls;
        state_ = rx_eo_ ? State::kReceivingRequest : State::kReceivingOneWay;
      }
      deliver(Delivery::kData, payload, n, complete_pkt, rx_eo_);
      ++rx_.next_pkt;
      nacked_.reset();
      progress();
      if (complete_pkt) {
        rx_.complete = true;
        if (rx_eo_) {
          state_ = State::kReplying;
          tx_call_ = h.call_seq;
          tx_next_pkt_ = 0;
          tx_eo_ = true;
          reply_complete_ = false;
        } else {
          state_ = State::kIdle;
        }
      }
      return;
    case RxEvent::kOutOfSequence:  // a dropped packet within the current call
      ++stats_.out_of_sequence;
      if (state_ == State::kIgnoringOneWay) {
        if (complete_pkt) {
          rx_.complete = true;
          state_ = State::kIdle;
        }
        return;
      }
      if (h.exactly_once != rx_eo_) {
        ++stats_.stray;
        return;
      }
      if (rx_eo_) {  // (v) exactly-once, or (vii) start still missing: NACK
        if (nacked_ != rx_.next_pkt) {
          send_control(PacketType::kNack, rx_.call, rx_.next_pkt);
          nacked_ = rx_.next_pkt;
        }
      } else {  // (v) one-way: no retransmission possible; abort what the strand has
        abort_oneway_if_receiving();
        state_ = complete_pkt ? State::kIdle : State::kIgnoringOneWay;
        if (complete_pkt) rx_.complete = true;
      }
      return;
    case RxEvent::kRepeated:
      ++stats_.duplicates;
      // A retransmitted request for the call already handled: never deliver it
      // again; give the held reply again (or say we are working on it).
      if (c.rel == CallRel::kCurrent && rx_eo_ && rx_.complete && h.exactly_once && tx_call_ == h.call_seq &&
          dup_response_allowed(now)) {
        if (state_ == State::kReplying) {
          send_control(PacketType::kCallAck, h.call_seq, 0);
        } else if (reply_complete_ && !held_.empty()) {
          retransmit_all();
        }
      }
      return;
    case RxEvent::kNewCallMissingStart:  // fully handled above
      return;
    case RxEvent::kStrayCall:
      ++stats_.stray;
      return;
    case RxEvent::kNack:
      ++stats_.nacks_received;
      if (c.rel == CallRel::kCurrent) {
        if (!rx_.complete) {  // the client waits, but we miss part of its request
          send_control(PacketType::kNack, rx_.call, rx_.next_pkt);
          nacked_ = rx_.next_pkt;
        } else if (rx_eo_ && tx_call_ == h.call_seq) {  // (iii) the call just handled: resend the reply
          if (ack_below(h.call_seq, h.pkt_seq) != 0) progress();
          const size_t resent = retransmit_from(h.call_seq, h.pkt_seq);
          pump(now);
          if (resent == 0 && state_ == State::kReplying) {
            send_control(PacketType::kCallAck, h.call_seq, 0);  // request received, reply not ready yet
          }
        } else {
          ++stats_.stray;
        }
      } else if (c.rel == CallRel::kNewer && state_ != State::kReplying) {
        // (iv) a call not started: the client has our reply (ack and free it)
        // and its new request was lost: NACK it from the first packet.
        server_begin_unstarted(h.call_seq, true);
        send_control(PacketType::kNack, h.call_seq, 0);
        nacked_ = 0;
      } else {
        ++stats_.stray;
      }
      return;
    case RxEvent::kCallAck:
      ++stats_.call_acks_received;
      if (h.call_seq == tx_call_ && reply_complete_) {
        release_reply();
      } else {
        ++stats_.stray;
      }
      return;
    case RxEvent::kReclaim:
      if (c.rel == CallRel::kCurrent) {
        send_control(PacketType::kReclaimAck, rx_.call, rx_.next_pkt);
      } else if (c.rel == CallRel::kNewer && state_ != State::kReplying) {
        server_begin_unstarted(h.call_seq, true);  // like (iv): we have nothing of this call yet
        send_control(PacketType::kReclaimAck, h.call_seq, 0);
      } else {
        ++stats_.stray;
      }
      return;
    case RxEvent::kReclaimAck:
      on_reclaim_ack(h, now);
      if (state_ != State::kZombie && !retx_due_) server_rearm(now);
      return;
  }
}

void Engine::server_timer(uint64_t now) {
  if (!retx_due_ || now < *retx_due_) return;
  ++stats_.timeouts;
  if (no_progress(now)) return;  // retries exhausted: kBad, zombie
  back_off();
  if (reclaim_outstanding_) {
    const uint8_t first = held_.empty() ? tx_next_pkt_ : held_.front().pkt;
    send_control(PacketType::kReclaim, tx_call_, first);
    retx_due_ = now + retx_interval();
  } else if (reply_complete_ && !held_.empty()) {  // (i) timeout: retransmit unacknowledged buffers
    retransmit_all();
    retx_due_ = now + retx_interval();
  } else {
    retx_due_.reset();  // idle client, everything acknowledged: nothing to do
  }
}

}  // namespace otp
