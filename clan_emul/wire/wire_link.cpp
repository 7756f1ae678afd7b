#include "clan_emul/wire/wire_link.hpp"

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <sched.h>

#include <algorithm>
#include <cstring>

#include "clan_emul/error_detail.hpp"
#include "clan_emul/wire/fi_error.hpp"
#include "clan_emul/wire/wire.hpp"
#include "clan_emul/wire/wire_engine.hpp"
#include "clan_emul/wire/wire_message.hpp"
#include "clan_emul/wire/write_notice.hpp"

namespace clan::wire {

WireLink::WireLink(WireEngine& wire, uint64_t id, uint64_t peer_nic, size_t staging_bytes, size_t inject_size)
    : wire_(wire),
      id_(id),
      peer_nic_(peer_nic),
      inject_size_(inject_size),
      staging_(std::max<size_t>(staging_bytes, kMaxNoticeLength + 1)),
      receive_(kReceiveSlots * kReceiveBytes) {}

WireLink::~WireLink() {
  std::lock_guard lock(mu_);
  close_endpoint();
}

void WireLink::close_endpoint() {
  if (ep_) fi_close(&ep_->fid);
  ep_ = nullptr;
}

void WireLink::set_up() {
  State expected = State::kConnecting;
  state_.compare_exchange_strong(expected, State::kUp, std::memory_order_acq_rel);
}

void WireLink::set_down(Errc reason) {
  Errc none = Errc::kOk;
  down_reason_.compare_exchange_strong(none, reason, std::memory_order_acq_rel);
  state_.store(State::kDown, std::memory_order_release);
}

Errc WireLink::post_receive(size_t slot) {
  if (!ep_) return Errc::kClosed;
  ssize_t r = fi_recv(ep_, receive_buffer(slot), kReceiveBytes, nullptr, 0, make_context(id_, slot));
  return r == 0 ? Errc::kOk : fi_fail(static_cast<int>(r), "wire: fi_recv");
}

Errc WireLink::send(const void* msg, size_t len, Deadline hold) {
  std::unique_lock lock(mu_);
  return inject(msg, len, hold, lock);
}

// Marks every kInjectMark-th inject for a completion, so that what the
// provider queued for a peer that takes nothing stays bounded.
ssize_t WireLink::post_inject(const void* msg, size_t len) {
  if (injected_ - injects_sent_ >= kMaxInjectsQueued) return -FI_EAGAIN;
  ssize_t r;
  if ((injected_ + 1) % kInjectMark == 0) {
    iovec iov{const_cast<void*>(msg), len};
    fi_msg m{};
    m.msg_iov = &iov;
    m.iov_count = 1;
    m.context = make_context(id_, kInjectContext);
    r = fi_sendmsg(ep_, &m, FI_INJECT | FI_COMPLETION);
  } else {
    r = fi_inject(ep_, msg, len, 0);
  }
  if (r == 0) ++injected_;
  return r;
}

Errc WireLink::inject(const void* msg, size_t len, Deadline hold, std::unique_lock<std::mutex>& lock) {
  for (;;) {
    if (state() == State::kDown || !ep_) {
      return set_error(Errc::kClosed, 0, "wire: the connection to NIC %016llx is down: %s",
                       static_cast<unsigned long long>(peer_nic_), to_string(down_reason()));
    }
    const ssize_t r = post_inject(msg, len);
    if (r == 0) return Errc::kOk;
    if (r != -FI_EAGAIN) return fi_fail(static_cast<int>(r), "wire: fi_inject to NIC %016llx",
                                        static_cast<unsigned long long>(peer_nic_));
    if (hold.expired()) return Errc::kTimeout;
    // Room comes as the provider sends what it queued: make progress
    // (without the lock, which the progress may take).
    lock.unlock();
    wire_.poll();
    sched_yield();
    lock.lock();
  }
}

void WireLink::inject_mark_done() {
  std::lock_guard lock(mu_);
  injects_sent_ = std::min(injects_sent_ + kInjectMark, injected_);
}

Errc WireLink::send_reply(const void* msg, size_t len) {
  std::lock_guard lock(mu_);
  if (state() == State::kDown || !ep_) return Errc::kClosed;
  std::byte* buffer = replies_[next_reply_].data();
  next_reply_ = (next_reply_ + 1) % kMaxRepliesInFlight;
  std::memcpy(buffer, msg, std::min(len, kReceiveBytes));
  // Never waits: called while the progress lock is held. The replies in
  // flight are bounded (receive_done), so a full queue means a broken link.
  ssize_t r = fi_send(ep_, buffer, len, nullptr, 0, make_context(id_, kReplyContext));
  if (r != 0) return fi_fail(static_cast<int>(r), "wire: fi_send (import reply)");
  ++replies_in_flight_;
  return Errc::kOk;
}

Errc WireLink::send_notice_of_revocation(const void* msg, size_t len) {
  std::lock_guard lock(mu_);
  if (state() == State::kDown || !ep_) return Errc::kClosed;
  const ssize_t r = post_inject(msg, len);
  return r == 0 ? Errc::kOk : errc_from_fi(static_cast<int>(r));
}

void WireLink::reply_done() {
  std::lock_guard lock(mu_);
  if (replies_in_flight_ > 0) --replies_in_flight_;
  while (replies_in_flight_ < kMaxRepliesInFlight && !held_slots_.empty()) {
    const size_t slot = held_slots_.back();
    held_slots_.pop_back();
    (void)post_receive(slot);
  }
}

void WireLink::receive_done(size_t slot) {
  std::lock_guard lock(mu_);
  if (replies_in_flight_ >= kMaxRepliesInFlight) {
    held_slots_.push_back(slot);
    return;
  }
  (void)post_receive(slot);
}

void WireLink::note_revoked(uint32_t region, uint32_t generation) {
  std::lock_guard lock(mu_);
  revoked_[region] = generation;
  any_revoked_.store(true, std::memory_order_release);
}

Errc WireLink::revoked(uint32_t region, uint32_t generation) {
  if (!any_revoked_.load(std::memory_order_acquire)) return Errc::kOk;
  std::lock_guard lock(mu_);
  auto it = revoked_.find(region);
  if (it == revoked_.end() || it->second != generation) return Errc::kOk;
  return set_error(Errc::kRevokedCookie, 0, "wire: NIC %016llx revoked region %u (generation %u)",
                   static_cast<unsigned long long>(peer_nic_), region, generation);
}

Errc WireLink::write(uint64_t key, uint32_t region, uint64_t offset, const void* src, size_t len, Deadline hold) {
  std::unique_lock lock(mu_);
  const auto* from = static_cast<const std::byte*>(src);
  const size_t most = std::min(kMaxNoticeLength, staging_.size() / 2);
  size_t done = 0;
  do {
    const size_t chunk = std::min(len - done, most);
    // Only the first part may time out (not written): once a part is out,
    // the rest follows, or the connection closes (stalled()). A writer
    // without a deadline is not left waiting on a peer that takes nothing.
    const bool stall_closes = done > 0 || hold.is_never();
    const Deadline part_hold = stall_closes ? stall_deadline() : hold;
    Errc e = post_chunk(key, region, offset + done, from + done, chunk, part_hold, lock);
    if (e == Errc::kTimeout && stall_closes) e = stalled(done > 0 ? "a write's later part" : "a write");
    if (e != Errc::kOk) {
      // A connection this write found or left down leaves the engine's maps.
      if (state() == State::kDown) {
        lock.unlock();
        wire_.link_down(id_, down_reason());
      }
      return e;
    }
    done += chunk;
  } while (done < len);
  return Errc::kOk;
}

Deadline WireLink::stall_deadline() const { return Deadline::after(wire_.config_.stall_timeout); }

// A peer that took nothing for the stall timeout in the middle of a write:
// the connection closes, so that the half-written region is never taken
// for whole and the writer does not wait forever. Under mu_; write() then
// takes the link out of the engine's maps.
Errc WireLink::stalled(const char* what) {
  set_down(Errc::kTimeout);
  close_endpoint();  // nothing queued may land after the writer heard it failed
  return set_error(Errc::kClosed, 0,
                   "wire: NIC %016llx took nothing for %lld ms while %s waited: the connection is closed",
                   static_cast<unsigned long long>(peer_nic_),
                   static_cast<long long>(wire_.config_.stall_timeout.count()), what);
}

// The data as an RMA write, flagged FI_MORE: its notice follows at once,
// and the provider may send both together.
ssize_t WireLink::post_write(uint64_t key, uint64_t offset, const std::byte* src, size_t len) {
  iovec iov{const_cast<std::byte*>(src), len};
  fi_rma_iov rma{offset, len, key};
  fi_msg_rma msg{};
  msg.msg_iov = &iov;
  msg.iov_count = 1;
  msg.rma_iov = &rma;
  msg.rma_iov_count = 1;
  if (len <= inject_size_) return fi_writemsg(ep_, &msg, FI_INJECT | FI_MORE);
  std::byte* stage = staging_.reserve(len);
  if (!stage) return -FI_EAGAIN;
  std::memcpy(stage, src, len);
  iov.iov_base = stage;
  msg.context = make_context(id_, kWriteContext);
  const ssize_t r = fi_writemsg(ep_, &msg, FI_MORE | FI_COMPLETION);
  if (r == 0) staging_.commit(len);
  return r;
}

// The notice after its write. It must go once the write went, so it is
// retried until the stall timeout; the link's own progress frees room for it.
Errc WireLink::post_notice(uint32_t region, uint64_t offset, size_t len, std::unique_lock<std::mutex>& lock) {
  const auto notice = encode_notice_message(encode_notice(region, offset, len));
  const Errc e = inject(notice.data(), notice.size(), stall_deadline(), lock);
  if (e == Errc::kTimeout) return stalled("a write's notice");
  if (e != Errc::kOk && state() != State::kDown) {
    // A write whose notice cannot follow: the link is of no further use.
    set_down(Errc::kClosed);
    close_endpoint();
  }
  return e;
}

// A small write in its notice: one message, which delivers exactly these
// bytes; the target checks that this link imported the region.
Errc WireLink::post_inline(uint32_t region, uint64_t offset, const std::byte* src, size_t len, Deadline hold,
                           std::unique_lock<std::mutex>& lock) {
  std::byte message[kNoticeMessageBytes + kMaxInlineWrite];
  const size_t size = encode_inline_write(encode_notice(region, offset, len), src, message);
  return inject(message, size, hold, lock);
}

Errc WireLink::post_chunk(uint64_t key, uint32_t region, uint64_t offset, const std::byte* src, size_t len,
                          Deadline hold, std::unique_lock<std::mutex>& lock) {
  for (;;) {
    if (state() == State::kDown || !ep_) {
      return set_error(Errc::kClosed, 0, "wire: the connection to NIC %016llx is down: %s",
                       static_cast<unsigned long long>(peer_nic_), to_string(down_reason()));
    }
    if (len <= kMaxInlineWrite) return post_inline(region, offset, src, len, hold, lock);
    const ssize_t r = post_write(key, offset, src, len);
    if (r == 0) return post_notice(region, offset, len, lock);
    if (r != -FI_EAGAIN) return fi_fail(static_cast<int>(r), "wire: fi_writemsg to NIC %016llx",
                                        static_cast<unsigned long long>(peer_nic_));
    if (hold.expired()) return Errc::kTimeout;
    lock.unlock();
    wire_.poll();
    sched_yield();
    lock.lock();
  }
}

}  // namespace clan::wire
