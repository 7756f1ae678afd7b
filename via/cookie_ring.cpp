#include "via/cookie_ring.hpp"

#include <algorithm>
#include <atomic>

#include "clan_emul/nic.hpp"

namespace via {

using clan::Errc;
using namespace wire;

namespace {
uint64_t load_word(const std::byte* p) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(const_cast<std::byte*>(p)))
      .load(std::memory_order_acquire);
}
size_t slot_at(uint64_t pos, uint32_t slots) { return kCkRing + (pos % slots) * kCkSlot; }
}  // namespace

Errc CookieSender::attach(clan::Aperture& peer, size_t at, uint32_t slots) {
  if (slots < 8 || slots > 4096 || at > peer.size() || peer.size() - at < ck_region_bytes(slots)) {
    return Errc::kCorrupt;
  }
  ring_ = &peer;
  ring_at_ = at;
  slots_ = slots;
  return Errc::kOk;
}

Errc CookieSender::push(uint64_t pos, const void* msg, size_t len, clan::Deadline hold) {
  if (len > kCkMessage) return Errc::kInvalidArgument;
  const uint64_t read = load_word(words_ + kCkRead);  // the peer wrote it
  if (read > pos || pos - read >= slots_) return Errc::kCorrupt;
  const size_t at = ring_at_ + slot_at(pos, slots_);
  // A message written without its tag is not there for the reader: held
  // part way, the push is simply made again.
  Errc e = ring_->write(at + 8, msg, len, hold);
  if (e == Errc::kOk) e = ring_->write_word(at, pos + 1, hold);  // the tag publishes it
  if (e != Errc::kOk) return e;
  // Pairs with want_doorbell's fence: either the reader sees the tag, or we
  // see its request and ring.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (doorbell_owed_ != 0 || load_word(words_ + kCkWant) != 0) {
    doorbell_owed_ = pos + 1;
    flush(hold);  // or owed, and rung at the next push or flush
  }
  // The next slot was last written a lap (512 posts) ago: with dozens of
  // VIs its lines have left the caches, and fetching them would stall the
  // next push's fence. Fetch them now, while they are not needed.
  ring_->prefetch_for_write(ring_at_ + slot_at(pos + 1, slots_), 8 + len);
  return e;
}

bool CookieSender::flush(clan::Deadline hold) {
  if (doorbell_owed_ == 0) return true;
  const Errc e = ring_->write_word(ring_at_ + kCkDoorbell, doorbell_owed_, hold);
  if (e != Errc::kTimeout) doorbell_owed_ = 0;  // rung, or the peer is gone: moot
  return doorbell_owed_ == 0;
}

clan::Result<std::unique_ptr<CookieReceiver>> CookieReceiver::create(clan::Nic& nic,
                                                                     const clan::Region& block,
                                                                     size_t at, uint32_t slots) {
  if (at > block.size() || block.size() - at < ck_region_bytes(slots)) return Errc::kInvalidArgument;
  auto q = std::make_unique<CookieReceiver>();
  q->ring_ = block.data() + at;
  q->slots_ = slots;
  auto tw = nic.arm_tripwire(block, at + kCkDoorbell);
  if (!tw) return tw.error();
  q->tripwire_ = std::move(tw.value());
  return q;
}

Errc CookieReceiver::attach(clan::Aperture& peer, size_t at, uint64_t first) {
  if (at > peer.size() || peer.size() - at < kCkSenderBytes) return Errc::kCorrupt;
  sender_ = &peer;
  sender_at_ = at;
  next_.store(first, std::memory_order_relaxed);
  // Our starting point: the peer's room is counted from here.
  return sender_->write_word(sender_at_ + kCkRead, first);
}

const std::byte* CookieReceiver::peek() const {
  const uint64_t next = next_.load(std::memory_order_relaxed);
  const std::byte* slot = ring_ + slot_at(next, slots_);
  // Any other tag is an older lap's (or garbage): not yet written.
  return load_word(slot) == next + 1 ? slot + 8 : nullptr;
}

void CookieReceiver::consume() {
  const uint64_t next = next_.load(std::memory_order_relaxed) + 1;
  next_.store(next, std::memory_order_relaxed);
  // The peer has at most kMaxDescriptorsPerQueue descriptors in the ring, far
  // below its size: a read pointer an eighth of the ring behind is as good.
  // One that finds the peer's endpoint on the host is owed, and the newest
  // goes at the next consume or flush (paper 004 sect. 3.2).
  if (owed_ || next % std::max<uint32_t>(slots_ / 8, 1) == 0) {
    flush(clan::Deadline::already_expired());
  }
}

bool CookieReceiver::flush(clan::Deadline hold) {
  const uint64_t next = next_.load(std::memory_order_relaxed);
  // A dead peer's region: the error is moot.
  owed_ = sender_->write_word(sender_at_ + kCkRead, next, hold) == Errc::kTimeout;
  return !owed_;
}

void CookieReceiver::want_doorbell(bool on, clan::Deadline hold) {
  if (on == want_) return;
  if (sender_->write_word(sender_at_ + kCkWant, on ? 1 : 0, hold) == Errc::kTimeout) {
    return;  // not asked: the next call asks again
  }
  want_ = on;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

}  // namespace via
