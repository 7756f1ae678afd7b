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

Errc WireLink::send(const void* msg, size_t len) {
  std::lock_guard lock(mu_);
  if (state() == State::kDown || !ep_) return Errc::kClosed;
  for (;;) {
    ssize_t r = fi_inject(ep_, msg, len, 0);
    if (r == 0) return Errc::kOk;
    if (r != -FI_EAGAIN) return fi_fail(static_cast<int>(r), "wire: fi_inject (control message)");
    // Room comes as the provider sends what it queued: make progress.
    wire_.poll();
    sched_yield();
  }
}

Errc WireLink::write(uint64_t key, uint32_t region, uint64_t offset, const void* src, size_t len, Deadline hold) {
  std::unique_lock lock(mu_);
  const auto* from = static_cast<const std::byte*>(src);
  size_t done = 0;
  do {
    const size_t chunk = std::min(len - done, kMaxNoticeLength);
    // Only the first part may time out: once a part is out, the rest follows.
    const Deadline part_hold = done == 0 ? hold : Deadline::never();
    if (Errc e = post_chunk(key, region, offset + done, from + done, chunk, part_hold, lock); e != Errc::kOk) {
      return e;
    }
    done += chunk;
  } while (done < len);
  return Errc::kOk;
}

Errc WireLink::post_chunk(uint64_t key, uint32_t region, uint64_t offset, const std::byte* src, size_t len,
                          Deadline hold, std::unique_lock<std::mutex>& lock) {
  const uint64_t notice = encode_notice(region, offset, len);
  for (;;) {
    if (state() == State::kDown || !ep_) {
      return set_error(Errc::kClosed, 0, "wire: the connection to NIC %016llx is down: %s",
                       static_cast<unsigned long long>(peer_nic_), to_string(down_reason()));
    }
    ssize_t r = -FI_EAGAIN;
    if (len <= inject_size_) {
      r = fi_inject_writedata(ep_, src, len, notice, 0, offset, key);
    } else if (std::byte* stage = staging_.reserve(len)) {
      std::memcpy(stage, src, len);
      r = fi_writedata(ep_, stage, len, nullptr, notice, 0, offset, key, make_context(id_, kWriteContext));
      if (r == 0) staging_.commit(len);
    }
    if (r == 0) return Errc::kOk;
    if (r != -FI_EAGAIN) return fi_fail(static_cast<int>(r), "wire: fi_writedata to NIC %016llx",
                                        static_cast<unsigned long long>(peer_nic_));
    if (hold.expired()) return Errc::kTimeout;
    lock.unlock();
    wire_.poll();
    sched_yield();
    lock.lock();
  }
}

}  // namespace clan::wire
