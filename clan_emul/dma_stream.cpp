#include "clan_emul/dma_stream.hpp"

#include "clan_emul/aperture.hpp"
#include "clan_emul/dma_engine.hpp"
#include "clan_emul/event_queue.hpp"
#include "clan_emul/spin_wait.hpp"
#include "clan_emul/nic.hpp"

namespace clan {

DmaStream::DmaStream(Nic& nic, EventQueue* queue, uint64_t user)
    : engine_(nic.dma()), queue_(queue), policy_{nic.wait_mode(), nic.spin_budget().count(), nullptr} {
  if (queue_) {
    auto s = queue_->add_source(user);
    if (s) {
      source_ = s.value();
    } else {
      queue_ = nullptr;  // no event source left: completions are still waitable
      error_.store(s.error(), std::memory_order_relaxed);
    }
  }
}

DmaStream::~DmaStream() {
  wait(submitted_, Deadline::never());
  // The engine may still be inside complete() for the last ticket (waking
  // waiters): it is done with this object only once `finished_` says so.
  while (finished_.load(std::memory_order_acquire) != submitted_) cpu_relax();
  if (queue_) queue_->remove_source(source_);
}

Result<uint64_t> DmaStream::submit(Aperture& aperture, size_t offset, const void* src, size_t len,
                                   uint64_t word) {
  if (!aperture.valid()) return Errc::kClosed;
  if (offset > aperture.size() || len > aperture.size() - offset) return Errc::kOutOfRange;
  const uint64_t ticket = submitted_ + 1;
  if (held_.load(std::memory_order_relaxed) >= engine_.held_share()) return Errc::kWouldBlock;
  Errc e = engine_.submit(DmaRequest{&aperture, offset, src, len, word, this, ticket});
  if (e != Errc::kOk) return e;
  submitted_ = ticket;
  return ticket;
}

Result<uint64_t> DmaStream::write(Aperture& aperture, size_t offset, const void* src, size_t len) {
  if (src == nullptr && len != 0) return Errc::kInvalidArgument;
  static const char kEmpty = 0;
  return submit(aperture, offset, src ? src : &kEmpty, len, 0);
}

Result<uint64_t> DmaStream::write_word(Aperture& aperture, size_t offset, uint64_t value) {
  if (offset % 8 != 0) return Errc::kInvalidArgument;
  return submit(aperture, offset, nullptr, 8, value);
}

void DmaStream::complete(uint64_t ticket, Errc result) {
  if (result != Errc::kOk) {
    Errc expected = Errc::kOk;
    error_.compare_exchange_strong(expected, result, std::memory_order_acq_rel);
  }
  completed_.store(ticket, std::memory_order_seq_cst);
  wake_sleepers(sleepers_, wakeups_);
  if (queue_) queue_->notify(source_);
  finished_.store(ticket, std::memory_order_release);  // last touch of *this
}

Errc DmaStream::wait(uint64_t ticket, Deadline deadline, WaitMode mode) const {
  WaitPolicy policy = policy_;
  policy.mode = mode;
  return wait_on_word([&] { return done(ticket); }, policy, sleepers_, wakeups_, deadline);
}

}  // namespace clan
