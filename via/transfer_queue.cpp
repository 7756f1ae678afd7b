#include "via/transfer_queue.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "clan_emul/nic.hpp"

namespace via {

using clan::Errc;
using namespace wire;

namespace {
uint64_t load_word(const std::byte* p) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(const_cast<std::byte*>(p)))
      .load(std::memory_order_acquire);
}
}  // namespace

Errc TransferSender::attach(clan::Aperture& peer, size_t at, uint32_t slots) {
  if (slots == 0 || slots > (1u << 20) || at > peer.size() || peer.size() - at < tq_region_bytes(slots)) {
    return Errc::kCorrupt;
  }
  ring_ = &peer;
  ring_at_ = at;
  slots_ = slots;
  return Errc::kOk;
}

Errc TransferSender::space() const {
  const uint64_t read = load_word(read_word_ + kTqRead);
  if (read > write_i_) return Errc::kCorrupt;
  return write_i_ - read < slots_ ? Errc::kOk : Errc::kWouldBlock;
}

namespace {
size_t slot_at(uint64_t position, uint32_t slots) {
  return kTqRing + (position % slots) * sizeof(Record);
}
constexpr size_t kBody = sizeof(uint64_t);  // where a record's body starts, after its tag
}  // namespace

Errc TransferSender::put(Record r, clan::Deadline hold) {
  r.tag = write_i_ + 1;
  r.reserved[0] = r.reserved[1] = r.reserved[2] = 0;
  r.check = record_check(r);
  Errc e = ring_->write(ring_at_ + slot_at(write_i_, slots_) + kBody,
                        reinterpret_cast<const std::byte*>(&r) + kBody, sizeof r - kBody, hold);
  if (e == Errc::kOk) ++write_i_;
  // As CookieSender::push does for its next slot: fetch the next record's
  // line a message ahead, not when it is written.
  ring_->prefetch_for_write(ring_at_ + slot_at(write_i_, slots_), sizeof(Record));
  return e;
}

Errc TransferSender::publish_pio(clan::Deadline hold) {
  for (; published_i_ < write_i_; ++published_i_) {
    const size_t tag = ring_at_ + slot_at(published_i_, slots_);
    if (Errc e = ring_->write_word(tag, published_i_ + 1, hold); e != Errc::kOk) {
      pointer_owed_ = e == Errc::kTimeout;
      return e;
    }
  }
  const Errc e = ring_->write_word(ring_at_ + kTqWrite, write_i_, hold);
  pointer_owed_ = e == Errc::kTimeout;
  return e;
}

clan::Result<uint64_t> TransferSender::publish_dma(clan::DmaStream& dma) {
  for (; published_i_ < write_i_; ++published_i_) {
    auto t = dma.write_word(*ring_, ring_at_ + slot_at(published_i_, slots_), published_i_ + 1);
    if (!t) return t;
  }
  // The DMA engine holds and retries a write to a reader on the host.
  // Not taken (kWouldBlock): owed, and written at the next progress.
  auto t = dma.write_word(*ring_, ring_at_ + kTqWrite, write_i_);
  pointer_owed_ = !t;
  return t;
}

clan::Result<std::unique_ptr<TransferReceiver>> TransferReceiver::create(clan::Nic& nic,
                                                                         const clan::Region& block,
                                                                         size_t at, uint32_t slots) {
  if (at > block.size() || block.size() - at < tq_region_bytes(slots)) return Errc::kInvalidArgument;
  auto q = std::make_unique<TransferReceiver>();
  q->ring_ = block.data() + at;
  q->slots_ = slots;
  auto tw = nic.arm_tripwire(block, at + kTqWrite);
  if (!tw) return tw.error();
  q->tripwire_ = std::move(tw.value());
  return q;
}

Errc TransferReceiver::attach(clan::Aperture& peer, size_t at) {
  if (at > peer.size() || peer.size() - at < kTqSenderBytes) return Errc::kCorrupt;
  read_pointer_ = &peer;
  read_pointer_at_ = at;
  return Errc::kOk;
}

uint64_t TransferReceiver::tag_at(uint64_t position) const {
  return load_word(ring_ + slot_at(position, slots_));
}

clan::Result<std::optional<Record>> TransferReceiver::peek() const {
  const uint64_t read = read_i_.load(std::memory_order_relaxed);
  // Any other tag is an older lap's (or garbage): not there yet.
  if (tag_at(read) != read + 1) return std::optional<Record>();
  // The tag was loaded with acquire: the body written before it is visible.
  Record r;
  std::memcpy(&r, ring_ + slot_at(read, slots_), sizeof r);
  if (r.tag != read + 1 || r.check != record_check(r) || (r.flags & ~kKnownFlags) != 0 ||
      (r.reserved[0] | r.reserved[1] | r.reserved[2]) != 0) {
    return Errc::kCorrupt;
  }
  return std::optional<Record>(r);
}

void TransferReceiver::consume() {
  const uint64_t read = read_i_.load(std::memory_order_relaxed) + 1;
  read_i_.store(read, std::memory_order_relaxed);
  // The sender needs our read pointer only to see that the ring is not full,
  // and it never has more records outstanding than we have receive
  // descriptors posted (at most kMaxDescriptorsPerQueue, under half the ring):
  // a pointer at most an eighth of the ring behind is as good, and costs a
  // remote write per eighth of the ring, not per record.
  // One whose write found the sender's endpoint on the host is owed, and
  // the newest read pointer goes at the next consume or flush (paper 004
  // sect. 3.2: retried, never waited for here).
  if (owed_ || read % std::max<uint32_t>(slots_ / 8, 1) == 0) {
    flush(clan::Deadline::already_expired());
  }
}

bool TransferReceiver::flush(clan::Deadline hold) {
  const uint64_t read = read_i_.load(std::memory_order_relaxed);
  // A dead peer's region: the error is moot.
  owed_ = read_pointer_->write_word(read_pointer_at_ + kTqRead, read, hold) == Errc::kTimeout;
  return !owed_;
}

}  // namespace via
