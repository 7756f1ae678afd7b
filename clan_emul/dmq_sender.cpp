#include "clan_emul/dmq_sender.hpp"

#include <thread>

#include "clan_emul/nic.hpp"

namespace clan {

using namespace dmq;

Result<std::unique_ptr<DmqSender>> DmqSender::create(Nic& nic, const DmqConfig& config,
                                                     const Endpoint* endpoint) {
  if (!valid(config)) return Errc::kInvalidArgument;
  std::unique_ptr<DmqSender> s(new DmqSender(nic, config));
  s->endpoint_ = endpoint;
  auto region = nic.export_region(kSenderRegionBytes, endpoint);
  if (!region) return region.error();
  s->region_ = std::move(region.value());
  auto tw = nic.arm_tripwire(s->region_, kLazyRead);
  if (!tw) return tw.error();
  s->space_tripwire_ = std::move(tw.value());
  return s;
}

DmqSender::~DmqSender() {
  if (dma_) dma_->wait(dma_->submitted(), Deadline::never());
}

Errc DmqSender::attach(const RdmaCookie& receiver) {
  if (ring_.valid()) return Errc::kInvalidArgument;
  if (receiver.length < receiver_region_bytes(config_)) return Errc::kInvalidArgument;
  auto ap = nic_.import(receiver, endpoint_);
  if (!ap) return ap.error();
  ring_ = std::move(ap.value());
  if (ring_.remote()) staged_.resize(kHeader + config_.max_message);
  return Errc::kOk;
}

Errc DmqSender::attach(const RdmaCookie& receiver, const DmqConfig& receiver_config) {
  if (ring_.valid() || !valid(receiver_config)) return Errc::kInvalidArgument;
  config_ = receiver_config;
  return attach(receiver);
}

DmaStream& DmqSender::dma() {
  if (!dma_) dma_ = std::make_unique<DmaStream>(nic_);
  return *dma_;
}

Errc DmqSender::fail(Errc e) {
  Errc expected = Errc::kOk;
  status_.compare_exchange_strong(expected, e, std::memory_order_acq_rel);
  return status_.load(std::memory_order_acquire);
}

void DmqSender::abort(Errc reason) {
  fail(reason);
  space_tripwire_.poke();
}

size_t DmqSender::space() const {
  const uint64_t lazy_read = std::atomic_ref<uint64_t>(
      *reinterpret_cast<uint64_t*>(region_.data() + kLazyRead)).load(std::memory_order_acquire);
  // The receiver wrote this word: trust it only inside [write_i - ring, write_i].
  if (lazy_read > write_i_ || write_i_ - lazy_read > config_.ring_bytes) return 0;
  return config_.ring_bytes - (write_i_ - lazy_read);
}

Errc DmqSender::wait_for_space(size_t need, Deadline deadline) {
  auto* words = reinterpret_cast<uint64_t*>(region_.data());
  Errc verdict = Errc::kOk;
  auto ready = [&] {
    if (Errc st = status(); st != Errc::kOk) return verdict = st, true;
    if (std::atomic_ref<uint64_t>(words[kReceiverClosed / 8]).load(std::memory_order_acquire)) {
      return verdict = Errc::kClosed, true;
    }
    const uint64_t lazy_read =
        std::atomic_ref<uint64_t>(words[kLazyRead / 8]).load(std::memory_order_acquire);
    if (lazy_read > write_i_ || write_i_ - lazy_read > config_.ring_bytes || lazy_read % 8) {
      return verdict = fail(Errc::kCorrupt), true;
    }
    seen_read_ = lazy_read;
    return config_.ring_bytes - (write_i_ - lazy_read) >= need;
  };
  Errc e = space_tripwire_.wait(ready, deadline);
  return e != Errc::kOk ? e : verdict;
}

Errc DmqSender::reserve(size_t need, Deadline deadline) {
  // Our sends only ever took what was free up to seen_read_, so write_i_ -
  // seen_read_ <= ring_bytes.
  if (config_.ring_bytes - (write_i_ - seen_read_) >= need) return status();
  return wait_for_space(need, deadline);
}

Errc DmqSender::send(const void* data, size_t len, Deadline deadline, Transfer how) {
  if (how == Transfer::kDma) {
    auto ticket = send_dma_async(data, len, deadline);
    if (!ticket) return ticket.error();
    // Queued means sent: wait for the copy itself (the engine always makes
    // progress), so that kTimeout only ever means "not sent".
    dma_->wait(ticket.value(), Deadline::never());
    return dma_->error() != Errc::kOk ? fail(dma_->error()) : Errc::kOk;
  }
  if (!ring_.valid()) return Errc::kInvalidArgument;
  if (len > config_.max_message || (data == nullptr && len != 0)) return Errc::kInvalidArgument;
  const size_t need = kHeader + align8(len);
  if (Errc e = reserve(need, deadline); e != Errc::kOk) return e;
  const size_t at = kRing + (write_i_ & (config_.ring_bytes - 1));
  // A receiver whose endpoint is not resident holds each write up to the
  // deadline (kTimeout: not sent). write_i_ moves only once the message is
  // published, so a later send writes the same place again.
  Errc e = write_message(at, data, len, deadline);
  // Publishing fires the receiver's tripwire.
  if (e == Errc::kOk) e = ring_.write_word(kLazyWrite, write_i_ + need, deadline);
  if (e == Errc::kTimeout) return e;
  if (e != Errc::kOk) return fail(e);
  write_i_ += need;
  return Errc::kOk;
}

// On this host the header is one word store and the bytes follow it; over
// the wire the two go as one write, since each write is a message there
// and the receiver reads neither before the write pointer that follows.
Errc DmqSender::write_message(size_t at, const void* data, size_t len, Deadline deadline) {
  const uint64_t h = header(write_i_, static_cast<uint32_t>(len));
  if (len && !staged_.empty()) {
    std::memcpy(staged_.data(), &h, kHeader);
    std::memcpy(staged_.data() + kHeader, data, len);
    return ring_.write(at, staged_.data(), kHeader + len, deadline);
  }
  Errc e = ring_.write_word(at, h, deadline);
  if (e == Errc::kOk && len) e = ring_.write(at + kHeader, data, len, deadline);
  return e;
}

Result<uint64_t> DmqSender::send_dma_async(const void* data, size_t len, Deadline deadline) {
  if (!ring_.valid()) return Errc::kInvalidArgument;
  if (len > config_.max_message || (data == nullptr && len != 0)) return Errc::kInvalidArgument;
  const size_t need = kHeader + align8(len);
  if (Errc e = reserve(need, deadline); e != Errc::kOk) return e;
  DmaStream& d = dma();
  if (d.error() != Errc::kOk) return fail(d.error());
  const size_t at = kRing + (write_i_ & (config_.ring_bytes - 1));
  // Three requests; the engine performs them in order, so the pointer update
  // lands after the data. A full engine queue is waited out, not dropped, and
  // without a deadline: a message is queued whole or not at all, and the
  // engine always drains.
  auto submit = [&](auto&& request) -> Result<uint64_t> {
    for (;;) {
      Result<uint64_t> t = request();
      if (t.ok() || t.error() != Errc::kWouldBlock) return t;
      // Wait for one of ours to finish; if the queue is full of other
      // streams' requests, let them run.
      if (d.completed() < d.submitted()) {
        d.wait(d.completed() + 1, Deadline::never());
      } else {
        std::this_thread::yield();
      }
    }
  };
  auto t = submit([&] { return d.write_word(ring_, at, header(write_i_, uint32_t(len))); });
  if (t && len) t = submit([&] { return d.write(ring_, at + kHeader, data, len); });
  if (!t) return fail(t.error());
  write_i_ += need;
  const uint64_t published = write_i_;
  t = submit([&] { return d.write_word(ring_, kLazyWrite, published); });
  if (!t) return fail(t.error());
  return t;
}

Errc DmqSender::close() {
  if (!ring_.valid()) return Errc::kInvalidArgument;
  if (dma_) dma_->wait(dma_->submitted(), Deadline::never());
  Errc e = ring_.write_word(kSenderClosed, 1);
  if (e == Errc::kOk) e = ring_.write_word(kLazyWrite, write_i_);  // fires the receiver's tripwire
  fail(Errc::kClosed);
  return e;
}

}  // namespace clan
