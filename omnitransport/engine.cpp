// Engine: construction, the packet handler (fragmentation, header insertion,
// holding and retransmission of buffers, RECLAIM) and the output queues.
// The role-specific machines are in engine_client.cpp and engine_server.cpp.
#include "omnitransport/engine.hpp"

#include <algorithm>
#include <cstring>

namespace otp {

Engine::Engine(Role role, EngineConfig config) : role_(role), cfg_(config) {
  cfg_.mtu = std::clamp<size_t>(cfg_.mtu, kHeaderSize + 1, kMaxPacketSize);
  // The window of held buffers must stay within half the 8-bit sequence space.
  cfg_.pool_buffers = std::clamp<size_t>(cfg_.pool_buffers, 1, 127);
  if (cfg_.rto_ns == 0) cfg_.rto_ns = 1;
  if (cfg_.max_retries < 0) cfg_.max_retries = 0;
}

Errc Engine::send(const void* data, size_t len, bool complete, bool exactly_once, uint64_t now_ns) {
  if (state_ == State::kZombie) return Errc::kZombie;
  const auto* p = static_cast<const std::byte*>(data);
  if (p == nullptr && len != 0) return Errc::kWrongState;
  if (role_ == Role::kClient) return client_send(p, len, complete, exactly_once, now_ns);
  return server_send(p, len, complete, now_ns);
}

// Packet handler: fragments one strand chunk to the MTU and inserts headers.
// A chunk that needs several packets is marked "fragmented" on every piece.
// Exactly-once packets go through the pool (held_ until acknowledged);
// one-way packets are transmitted and forgotten (at-most-once).
void Engine::queue_chunk(const std::byte* data, size_t len, bool complete, bool eo, uint64_t now) {
  const size_t maxp = max_payload();
  const size_t n = len == 0 ? 1 : (len + maxp - 1) / maxp;
  for (size_t i = 0; i < n; ++i) {
    const size_t off = i * maxp;
    const size_t plen = std::min(maxp, len - std::min(len, off));
    const bool last = i + 1 == n;
    Header h;
    h.type = last && complete ? PacketType::kComplete : PacketType::kPartial;
    h.exactly_once = eo;
    h.size = static_cast<uint16_t>(kHeaderSize + plen);
    h.call_seq = tx_call_;
    h.pkt_seq = tx_next_pkt_++;
    h.fragmented = n > 1;
    std::vector<std::byte> bytes(kHeaderSize + plen);
    encode(h, bytes.data());
    if (plen != 0) std::memcpy(bytes.data() + kHeaderSize, data + off, plen);
    if (eo) {
      unsent_.push_back(Buf{h.call_seq, h.pkt_seq, std::move(bytes)});
    } else {
      emit(std::move(bytes));
    }
  }
  if (eo) pump(now);
}

void Engine::emit(std::vector<std::byte> bytes) {
  ++stats_.packets_sent;
  out_.push_back(Packet{std::move(bytes)});
}

void Engine::send_control(PacketType t, uint8_t call, uint8_t pkt) {
  Header h;
  h.type = t;
  h.exactly_once = true;
  h.size = kHeaderSize;
  h.call_seq = call;
  h.pkt_seq = pkt;
  std::vector<std::byte> bytes(kHeaderSize);
  encode(h, bytes.data());
  switch (t) {
    case PacketType::kNack: ++stats_.nacks_sent; break;
    case PacketType::kCallAck: ++stats_.call_acks_sent; break;
    case PacketType::kReclaim: ++stats_.reclaims_sent; break;
    case PacketType::kReclaimAck: ++stats_.reclaim_acks_sent; break;
    case PacketType::kPartial:
    case PacketType::kComplete: break;
  }
  emit(std::move(bytes));
}

// Moves waiting packets into the pool while it has room; when the pool is
// exhausted with data still waiting, the sender must RECLAIM (sect. 4.3).
void Engine::pump(uint64_t now) {
  while (!unsent_.empty() && held_.size() < cfg_.pool_buffers) {
    Buf b = std::move(unsent_.front());
    unsent_.pop_front();
    emit(b.bytes);
    held_.push_back(std::move(b));
  }
  if (!unsent_.empty() && !reclaim_outstanding_) start_reclaim(now);
}

void Engine::start_reclaim(uint64_t now) {
  reclaim_outstanding_ = true;
  const uint8_t first = held_.empty() ? tx_next_pkt_ : held_.front().pkt;
  send_control(PacketType::kReclaim, tx_call_, first);
  retx_due_ = now + cfg_.rto_ns;
}

// Frees the held buffers of `call` with pkt_seq < pkt (the peer has them).
size_t Engine::ack_below(uint8_t call, uint8_t pkt) {
  size_t freed = 0;
  while (!held_.empty() && held_.front().call == call && seq_lt(held_.front().pkt, pkt)) {
    held_.pop_front();
    ++freed;
  }
  return freed;
}

void Engine::ack_all() {
  held_.clear();
  unsent_.clear();
  reclaim_outstanding_ = false;
}

size_t Engine::retransmit_from(uint8_t call, uint8_t pkt) {
  size_t n = 0;
  for (const Buf& b : held_) {
    if (b.call != call || seq_lt(b.pkt, pkt)) continue;
    emit(b.bytes);
    ++stats_.packets_retransmitted;
    ++n;
  }
  return n;
}

void Engine::retransmit_all() {
  for (const Buf& b : held_) {
    emit(b.bytes);
    ++stats_.packets_retransmitted;
  }
}

// RECLAIM_ACK(call, p): the peer has every buffer below p. Free those,
// resend the ones it lacks, and refill the pool.
void Engine::on_reclaim_ack(const Header& h, uint64_t now) {
  ++stats_.reclaim_acks_received;
  if (h.call_seq != tx_call_ || !reclaim_outstanding_) {
    ++stats_.stray;
    return;
  }
  reclaim_outstanding_ = false;
  if (ack_below(h.call_seq, h.pkt_seq) != 0) {
    retries_ = 0;
  } else if (no_progress(now)) {
    return;
  }
  retransmit_from(h.call_seq, h.pkt_seq);
  retx_due_.reset();
  pump(now);  // may start another RECLAIM (and arm the timer)
}

bool Engine::no_progress(uint64_t /*now*/) {
  if (++retries_ > cfg_.max_retries) {
    to_zombie(Delivery::kBad);
    return true;
  }
  return false;
}

bool Engine::dup_response_allowed(uint64_t now) {
  if (last_dup_response_ && now < *last_dup_response_ + cfg_.rto_ns) return false;
  last_dup_response_ = now;
  return true;
}

void Engine::deliver(Delivery what, const std::byte* data, size_t len, bool complete, bool eo) {
  Received r;
  r.what = what;
  if (len != 0) r.data.assign(data, data + len);
  r.complete = complete;
  r.exactly_once = eo;
  ++stats_.deliveries;
  in_.push_back(std::move(r));
}

void Engine::to_zombie(Delivery why) {
  if (state_ == State::kZombie) return;
  state_ = State::kZombie;
  held_.clear();
  unsent_.clear();
  reclaim_outstanding_ = false;
  retx_due_.reset();
  ack_due_.reset();
  deliver(why, nullptr, 0, false, false);
}

void Engine::on_packet(const std::byte* data, size_t len, uint64_t now_ns) {
  if (state_ == State::kZombie) return;
  Header h;
  if (decode(data, len, h) != Errc::kOk) {
    ++stats_.packets_malformed;
    return;
  }
  ++stats_.packets_received;
  const Classified c = classify(h, rx_, role_);
  const std::byte* payload = data + kHeaderSize;
  const size_t n = len - kHeaderSize;
  if (role_ == Role::kClient) {
    client_rx(h, c, payload, n, now_ns);
  } else {
    server_rx(h, c, payload, n, now_ns);
  }
}

void Engine::on_timer(uint64_t now_ns) {
  if (state_ == State::kZombie) return;
  if (role_ == Role::kClient) {
    client_timer(now_ns);
  } else {
    server_timer(now_ns);
  }
}

Errc Engine::reclaim(uint64_t now_ns) {
  if (state_ == State::kZombie) return Errc::kZombie;
  if (held_.empty() || reclaim_outstanding_) return Errc::kOk;
  start_reclaim(now_ns);
  return Errc::kOk;
}

void Engine::fail(uint64_t /*now_ns*/) { to_zombie(Delivery::kBad); }

void Engine::close(uint64_t /*now_ns*/) { to_zombie(Delivery::kEof); }

bool Engine::next_packet(Packet& out) {
  if (out_.empty()) return false;
  out = std::move(out_.front());
  out_.pop_front();
  return true;
}

bool Engine::next_received(Received& out) {
  if (in_.empty()) return false;
  out = std::move(in_.front());
  in_.pop_front();
  return true;
}

std::optional<uint64_t> Engine::next_timer() const {
  if (state_ == State::kZombie) return std::nullopt;
  if (retx_due_ && ack_due_) return std::min(*retx_due_, *ack_due_);
  return retx_due_ ? retx_due_ : ack_due_;
}

Stats Engine::stats() const {
  Stats s = stats_;
  s.buffers_held = held_.size() + unsent_.size();
  return s;
}

}  // namespace otp
