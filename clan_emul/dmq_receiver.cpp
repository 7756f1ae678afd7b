#include "clan_emul/dmq_receiver.hpp"

#include <cstring>

#include "clan_emul/nic.hpp"

namespace clan {

using namespace dmq;

Result<std::unique_ptr<DmqReceiver>> DmqReceiver::create(Nic& nic, const DmqConfig& config,
                                                         EventQueue* queue, uint64_t user,
                                                         const Endpoint* endpoint) {
  if (!valid(config)) return Errc::kInvalidArgument;
  std::unique_ptr<DmqReceiver> r(new DmqReceiver(nic, config));
  r->endpoint_ = endpoint;
  auto region = nic.export_region(receiver_region_bytes(config), endpoint);
  if (!region) return region.error();
  r->region_ = std::move(region.value());
  auto tw = nic.arm_tripwire(r->region_, kLazyWrite, queue, user);
  if (!tw) return tw.error();
  r->data_tripwire_ = std::move(tw.value());
  return r;
}

DmqReceiver::~DmqReceiver() = default;

Errc DmqReceiver::attach(const RdmaCookie& sender) {
  if (sender_.valid()) return Errc::kInvalidArgument;
  if (sender.length < kSenderRegionBytes) return Errc::kInvalidArgument;
  auto ap = nic_.import(sender, endpoint_);
  if (!ap) return ap.error();
  sender_ = std::move(ap.value());
  return Errc::kOk;
}

Errc DmqReceiver::fail(Errc e) {
  Errc expected = Errc::kOk;
  status_.compare_exchange_strong(expected, e, std::memory_order_acq_rel);
  return status_.load(std::memory_order_acquire);
}

void DmqReceiver::abort(Errc reason) {
  fail(reason);
  data_tripwire_.poke();
}

uint64_t DmqReceiver::lazy_write() const {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(region_.data() + kLazyWrite))
      .load(std::memory_order_acquire);
}

void DmqReceiver::peer_closed() {
  peer_closed_.store(true, std::memory_order_release);
  data_tripwire_.poke();
}

bool DmqReceiver::sender_closed() const {
  return peer_closed_.load(std::memory_order_acquire) ||
         std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(region_.data() + kSenderClosed))
             .load(std::memory_order_acquire) != 0;
}

bool DmqReceiver::readable() const {
  return status() != Errc::kOk || lazy_write() != read_i_.load(std::memory_order_relaxed) ||
         sender_closed();
}

Result<DmqMessage> DmqReceiver::receive(Deadline deadline) {
  if (pending_ != 0) return Errc::kInvalidArgument;  // release() the previous message first
  if (Errc st = status(); st != Errc::kOk) return st;
  const uint64_t read_i = read_i_.load(std::memory_order_relaxed);  // only this thread writes it
  uint64_t lw = 0;
  auto ready = [&] {
    if (status() != Errc::kOk) return true;
    lw = lazy_write();
    return lw != read_i || sender_closed();
  };
  if (owed_ && !ready()) pay_owed(deadline);
  if (Errc e = data_tripwire_.wait(ready, deadline); e != Errc::kOk) return e;
  if (Errc st = status(); st != Errc::kOk) return st;
  // Re-read after seeing a close: the last messages may have landed after our
  // first read of the pointer but before the close was seen.
  lw = lazy_write();
  // The sender wrote lw: it must lie in [read_i, read_i + ring] and be aligned.
  if (lw < read_i || lw - read_i > config_.ring_bytes || lw % 8 != 0) return fail(Errc::kCorrupt);
  if (lw == read_i) return fail(Errc::kClosed);  // closed and drained
  const size_t at = kRing + (read_i & (config_.ring_bytes - 1));
  // Read the header once: the peer may rewrite it while we look.
  const uint64_t hdr =
      std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(region_.data() + at))
          .load(std::memory_order_relaxed);
  const uint32_t len = static_cast<uint32_t>(hdr);
  if (hdr != header(read_i, len) || len > config_.max_message ||
      kHeader + align8(len) > lw - read_i) {
    return fail(Errc::kCorrupt);
  }
  pending_ = kHeader + align8(len);
  if (redirected_.load(std::memory_order_relaxed)) data_tripwire_.prefetch_for_set_queue();
  return DmqMessage{region_.data() + at + kHeader, len};
}

Errc DmqReceiver::release() {
  if (pending_ == 0) return Errc::kInvalidArgument;
  const uint64_t read_i = read_i_.load(std::memory_order_relaxed) + pending_;
  read_i_.store(read_i, std::memory_order_relaxed);
  pending_ = 0;
  // Over the wire each pointer is a message: it goes once a quarter of the
  // ring has been read since the last one. A sender blocks only while more
  // than half the ring is unread or unreported (a message is at most half
  // of it), so draining the ring always writes it one that frees the room.
  if (sender_.remote() && read_i - written_read_i_ < config_.ring_bytes / 4) return Errc::kOk;
  // The pointer is a lazy hint: it is not waited for (the deadline is
  // expired without a clock read).
  return write_read_pointer(Deadline::already_expired());
}

Errc DmqReceiver::write_read_pointer(Deadline hold) {
  // A sender that closed needs no more read pointers (and may be gone): the
  // messages it left in our ring can still be drained.
  if (sender_closed()) {
    owed_ = false;
    return Errc::kOk;
  }
  // Fires the sender's space tripwire.
  const uint64_t read_i = read_i_.load(std::memory_order_relaxed);
  const Errc e = sender_.write_word(kLazyRead, read_i, hold);
  if (e == Errc::kOk) written_read_i_ = read_i;
  owed_ = e == Errc::kTimeout;
  return e == Errc::kOk || owed_ ? Errc::kOk : fail(e);
}

// The receiver is about to block with a read pointer owed: the sender may be
// waiting for that very pointer to send again, so it is retried, in slices
// (each waits for the sender's endpoint), before the receiver sleeps on its
// ring. A message arriving meanwhile is seen at the end of a slice.
void DmqReceiver::pay_owed(Deadline deadline) {
  constexpr auto kSlice = std::chrono::milliseconds(2);
  for (;;) {
    const Deadline slice = Deadline::after(kSlice);
    write_read_pointer(slice.when() < deadline.when() ? slice : deadline);
    if (!owed_ || deadline.expired() || readable()) return;
  }
}

bool DmqReceiver::wait_readable(Deadline deadline) {
  auto ready = [this] { return readable(); };
  if (owed_ && !ready()) pay_owed(deadline);
  return data_tripwire_.wait(ready, deadline) == Errc::kOk;
}

Errc DmqReceiver::close(Deadline hold) {
  if (!sender_.valid()) return Errc::kInvalidArgument;
  const uint64_t read_i = read_i_.load(std::memory_order_relaxed);
  Errc e = sender_.write_word(kReceiverClosed, 1, hold);
  if (e == Errc::kOk) e = sender_.write_word(kLazyRead, read_i, hold);
  owed_ = false;
  fail(Errc::kClosed);
  return e;
}

}  // namespace clan
