// Engine: construction, the packet handler (fragmentation, header insertion,
// holding and retransmission of buffers, RECLAIM) and the output queues.
// The role-specific machines are in engine_client.cpp and engine_server.cpp.
#include "omnitransport/engine.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

namespace otp {

namespace {
EngineConfig clamped(EngineConfig c) {
  c.mtu = std::clamp<size_t>(c.mtu, kHeaderSize + 1, kMaxPacketSize);
  // The window of held buffers must stay within half the 8-bit sequence space.
  c.pool_buffers = std::clamp<size_t>(c.pool_buffers, 1, 127);
  if (c.rto_ns == 0) c.rto_ns = 1;
  c.rto_max_ns = std::max(c.rto_max_ns, c.rto_ns);
  if (c.max_retries < 0) c.max_retries = 0;
  return c;
}
}  // namespace

Engine::Engine(Role role, EngineConfig config)
    : role_(role), cfg_(clamped(config)), rto_(cfg_.rto_ns, cfg_.rto_max_ns) {}

Errc Engine::send(const void* data, size_t len, bool complete, bool exactly_once, uint64_t now_ns) {
  if (state_ == State::kZombie) return Errc::kZombie;
  const auto* p = static_cast<const std::byte*>(data);
  if (p == nullptr && len != 0) return Errc::kWrongState;
  if (role_ == Role::kClient) return client_send(p, len, complete, exactly_once, now_ns);
  return server_send(p, len, complete, now_ns);
}

Errc Engine::send_in_place(std::byte* data, size_t len, bool complete, bool exactly_once,
                           Retain retain, uint64_t now_ns) {
  if (sink_ == nullptr || len <= kHeaderSize) return send(data, len, complete, exactly_once, now_ns);
  lend_ = data;
  lend_retain_ = retain;
  const Errc e = send(data, len, complete, exactly_once, now_ns);
  lend_ = nullptr;
  if (retain == Retain::kCopy) {
    // The pool could not take these yet: the buffer is going away, keep copies.
    for (Buf& b : unsent_) {
      if (b.lent != nullptr) own(b);
    }
  }
  return e;
}

// Packet handler: fragments one strand chunk to the MTU and inserts headers.
// A chunk that needs several packets is marked "fragmented" on every piece.
// Exactly-once packets go through the pool (held_ until acknowledged);
// one-way packets are transmitted and forgotten (at-most-once).
void Engine::queue_chunk(const std::byte* data, size_t len, bool complete, bool eo, uint64_t now) {
  if (lend_ != nullptr && data == lend_ && len > kHeaderSize) {
    queue_chunk_in_place(lend_, len, complete, eo, now);
    return;
  }
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
    if (eo) {
      Buf b{h.call_seq, h.pkt_seq, take_spare()};
      b.bytes.resize(kHeaderSize + plen);
      encode(h, b.bytes.data());
      if (plen != 0) std::memcpy(b.bytes.data() + kHeaderSize, data + off, plen);
      unsent_.push_back(std::move(b));
    } else {
      std::vector<std::byte> bytes = take_spare();
      bytes.resize(kHeaderSize + plen);
      encode(h, bytes.data());
      if (plen != 0) std::memcpy(bytes.data() + kHeaderSize, data + off, plen);
      if (sink_ != nullptr) {
        emit(bytes.data(), bytes.size());
        recycle(std::move(bytes));
      } else {
        ++stats_.packets_sent;
        out_.push_back(Packet{std::move(bytes)});
      }
    }
  }
  if (eo) pump(now);
}

// The copy-out trick (Fig. 9). Packet 0 carries the chunk's first
// kHeaderSize bytes, copied out; packet j >= 1 carries the bytes from
// kHeaderSize + (j - 1) * max_payload on, with its header written over the
// kHeaderSize bytes just before them (sent already, by the packet before)
// for the time of its transmission.
void Engine::queue_chunk_in_place(std::byte* data, size_t len, bool complete, bool eo, uint64_t now) {
  const size_t maxp = max_payload();
  const size_t rest = len - kHeaderSize;
  const size_t n = 1 + (rest + maxp - 1) / maxp;
  for (size_t i = 0; i < n; ++i) {
    const size_t off = i == 0 ? 0 : kHeaderSize + (i - 1) * maxp;
    const size_t plen = i == 0 ? kHeaderSize : std::min(maxp, len - off);
    const bool last = i + 1 == n;
    Header h;
    h.type = last && complete ? PacketType::kComplete : PacketType::kPartial;
    h.exactly_once = eo;
    h.size = static_cast<uint16_t>(kHeaderSize + plen);
    h.call_seq = tx_call_;
    h.pkt_seq = tx_next_pkt_++;
    h.fragmented = true;
    Buf b{h.call_seq, h.pkt_seq, take_spare()};
    if (i == 0) {  // the copied-out head
      b.bytes.resize(kHeaderSize + plen);
      encode(h, b.bytes.data());
      std::memcpy(b.bytes.data() + kHeaderSize, data, plen);
    } else {
      b.bytes.resize(kHeaderSize);
      encode(h, b.bytes.data());
      b.lent = data + off;
      b.lent_len = plen;
      b.copy_after_send = lend_retain_ == Retain::kCopy;
    }
    if (eo) {
      unsent_.push_back(std::move(b));
    } else {
      b.copy_after_send = false;  // one-ways are never kept
      transmit(b);
      recycle(std::move(b.bytes));
    }
  }
  if (eo) pump(now);
}

void Engine::emit(const std::byte* p, size_t n) {
  ++stats_.packets_sent;
  if (sink_ != nullptr) {
    sink_->transmit(p, n);
    return;
  }
  std::vector<std::byte> bytes = take_spare();
  bytes.assign(p, p + n);
  out_.push_back(Packet{std::move(bytes)});
}

void Engine::transmit_in_place(const std::byte* header, std::byte* payload, size_t n) {
  if (sink_ == nullptr) {  // queued for later: the buffer may be gone by then
    std::vector<std::byte> bytes = take_spare();
    bytes.resize(kHeaderSize + n);
    std::memcpy(bytes.data(), header, kHeaderSize);
    std::memcpy(bytes.data() + kHeaderSize, payload, n);
    ++stats_.packets_sent;
    out_.push_back(Packet{std::move(bytes)});
    return;
  }
  std::byte* const at = payload - kHeaderSize;
  std::byte saved[kHeaderSize];
  std::memcpy(saved, at, kHeaderSize);
  std::memcpy(at, header, kHeaderSize);
  ++stats_.packets_sent;
  sink_->transmit(at, kHeaderSize + n);
  std::memcpy(at, saved, kHeaderSize);
}

void Engine::transmit(Buf& b) {
  if (b.lent == nullptr) {
    emit(b.bytes.data(), b.bytes.size());
    return;
  }
  transmit_in_place(b.bytes.data(), b.lent, b.lent_len);
  if (b.copy_after_send) own(b);
}

// A packet in a lent buffer becomes one the engine owns (header + payload).
void Engine::own(Buf& b) {
  std::vector<std::byte> bytes = take_spare();
  bytes.resize(kHeaderSize + b.lent_len);
  std::memcpy(bytes.data(), b.bytes.data(), kHeaderSize);
  std::memcpy(bytes.data() + kHeaderSize, b.lent, b.lent_len);
  recycle(std::move(b.bytes));
  b.bytes = std::move(bytes);
  b.lent = nullptr;
  b.lent_len = 0;
  b.copy_after_send = false;
}

bool Engine::borrowed() const {
  auto lent = [](const Buf& b) { return b.lent != nullptr; };
  return std::any_of(held_.begin(), held_.end(), lent) || std::any_of(unsent_.begin(), unsent_.end(), lent);
}

std::vector<std::byte> Engine::take_spare() {
  if (spare_.empty()) return {};
  std::vector<std::byte> v = std::move(spare_.back());
  spare_.pop_back();
  return v;
}

void Engine::recycle(std::vector<std::byte>&& bytes) {
  constexpr size_t kMaxSpare = 32;
  if (bytes.capacity() == 0 || spare_.size() >= kMaxSpare) return;
  bytes.clear();
  spare_.push_back(std::move(bytes));
}

void Engine::send_control(PacketType t, uint8_t call, uint8_t pkt) {
  Header h;
  h.type = t;
  h.exactly_once = true;
  h.size = kHeaderSize;
  h.call_seq = call;
  h.pkt_seq = pkt;
  std::byte bytes[kHeaderSize];
  encode(h, bytes);
  switch (t) {
    case PacketType::kNack: ++stats_.nacks_sent; break;
    case PacketType::kCallAck: ++stats_.call_acks_sent; break;
    case PacketType::kReclaim: ++stats_.reclaims_sent; break;
    case PacketType::kReclaimAck: ++stats_.reclaim_acks_sent; break;
    case PacketType::kPartial:
    case PacketType::kComplete: break;
  }
  emit(bytes, kHeaderSize);
}

// Moves waiting packets into the pool while it has room; when the pool is
// exhausted with data still waiting, the sender must RECLAIM (sect. 4.3).
void Engine::pump(uint64_t now) {
  while (!unsent_.empty() && held_.size() < cfg_.pool_buffers) {
    Buf b = std::move(unsent_.front());
    unsent_.pop_front();
    transmit(b);
    held_.push_back(std::move(b));
  }
  if (!unsent_.empty() && !reclaim_outstanding_) start_reclaim(now);
}

void Engine::start_reclaim(uint64_t now) {
  reclaim_outstanding_ = true;
  send_reclaim(now);
}

// RECLAIM(call, first held packet), and the timer that resends it.
void Engine::send_reclaim(uint64_t now) {
  const uint8_t first = held_.empty() ? tx_next_pkt_ : held_.front().pkt;
  send_control(PacketType::kReclaim, tx_call_, first);
  retx_due_ = now + retx_interval();
}

// NACK(call, next expected): "resend from the first packet missing here".
void Engine::nack_next_expected() {
  send_control(PacketType::kNack, rx_.call, rx_.next_pkt);
  nacked_ = rx_.next_pkt;
}

// Frees the held buffers of `call` with pkt_seq < pkt (the peer has them).
size_t Engine::ack_below(uint8_t call, uint8_t pkt) {
  size_t freed = 0;
  while (!held_.empty() && held_.front().call == call && seq_lt(held_.front().pkt, pkt)) {
    recycle(std::move(held_.front().bytes));
    held_.pop_front();
    ++freed;
  }
  return freed;
}

void Engine::ack_all() {
  drop_all();
  reclaim_outstanding_ = false;
}

size_t Engine::retransmit_from(uint8_t call, uint8_t pkt) {
  size_t n = 0;
  for (Buf& b : held_) {
    if (b.call != call || seq_lt(b.pkt, pkt)) continue;
    transmit(b);
    ++stats_.packets_retransmitted;
    ++n;
  }
  return n;
}

void Engine::retransmit_all() {
  for (Buf& b : held_) {
    transmit(b);
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
    progress();
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

namespace {
uint64_t backoff_ceiling(const EngineConfig& config) {
  return std::max(config.rto_max_ns, std::max<uint64_t>(config.rto_ns, 1));
}
}  // namespace

uint64_t backoff_interval(const EngineConfig& config, uint32_t timeouts) {
  return backoff_interval(config, config.rto_ns, timeouts);
}

uint64_t backoff_interval(const EngineConfig& config, uint64_t rto_ns, uint32_t timeouts) {
  const uint64_t cap = backoff_ceiling(config);
  uint64_t t = std::max<uint64_t>(rto_ns, 1);
  for (uint32_t i = 1; i < timeouts && t < cap; ++i) t *= 2;
  return std::min(t, cap);
}

int retries_lasting(const EngineConfig& config, uint64_t ns) {
  const uint64_t cap = backoff_ceiling(config);
  uint64_t sum = 0;
  uint64_t n = 0;
  for (; sum < ns; ++n) {
    const uint64_t t = backoff_interval(config, static_cast<uint32_t>(n));
    if (t == cap) {  // at the ceiling: the rest at once
      n += (ns - sum + cap - 1) / cap;
      break;
    }
    sum += t;
  }
  return static_cast<int>(std::min<uint64_t>(n, INT_MAX));
}

bool Engine::dup_response_allowed(uint64_t now) {
  if (last_dup_response_ && now < *last_dup_response_ + cfg_.rto_ns) return false;
  last_dup_response_ = now;
  return true;
}

void Engine::deliver(Delivery what, const std::byte* data, size_t len, bool complete, bool eo) {
  Received r;
  r.what = what;
  r.data = take_spare();
  if (len != 0) r.data.assign(data, data + len);
  r.complete = complete;
  r.exactly_once = eo;
  ++stats_.deliveries;
  in_.push_back(std::move(r));
}

void Engine::to_zombie(Delivery why) {
  if (state_ == State::kZombie) return;
  state_ = State::kZombie;
  drop_all();
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

void Engine::drop_all() {
  for (Buf& b : held_) recycle(std::move(b.bytes));
  for (Buf& b : unsent_) recycle(std::move(b.bytes));
  held_.clear();
  unsent_.clear();
  reclaim_outstanding_ = false;
}

bool Engine::next_packet(Packet& out) {
  recycle(std::move(out.bytes));
  if (out_.empty()) return false;
  out = std::move(out_.front());
  out_.pop_front();
  return true;
}

bool Engine::next_received(Received& out) {
  recycle(std::move(out.data));
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

std::optional<uint64_t> Engine::recovery_due() const {
  if (role_ == Role::kClient) {
    if (state_ == State::kWaitingForReply) return retx_due_;
    return std::nullopt;
  }
  if (state_ == State::kIdle && reply_complete_ && !held_.empty()) return reply_completed_at_ + cfg_.rto_ns;
  return std::nullopt;
}

Stats Engine::stats() const {
  Stats s = stats_;
  s.buffers_held = held_.size() + unsent_.size();
  return s;
}

}  // namespace otp
