// The DMA engine's requests for non-resident endpoints (paper 004 sect. 3.2:
// negatively acknowledged and retried, never dropped). A request is tried
// without waiting; if its target's endpoint is not resident (kTimeout: the
// aperture wrote nothing and asked for residency), it is set aside and
// retried, and the engine goes on with the requests behind it. Only the
// performer token's holder runs this code.
#include <algorithm>

#include "clan_emul/aperture.hpp"
#include "clan_emul/counter.hpp"
#include "clan_emul/dma_engine.hpp"
#include "clan_emul/dma_stream.hpp"

namespace clan {

namespace {

Errc try_write(const DmaRequest& r, Deadline hold) {
  return r.src ? r.aperture->write(r.offset, r.src, r.len, hold)
               : r.aperture->write_word(r.offset, r.word, hold);
}

}  // namespace

void DmaEngine::complete(const DmaRequest& r, Errc e, bool is_inline) {
  // Only the token's holder writes these: no read-modify-write needed.
  bump(performed_);
  if (is_inline) bump(performed_inline_);
  r.stream->complete(r.ticket, e);
}

// Whether `r` must wait behind one of the first `held` held requests: the
// same aperture (a pointer must not land before the data it covers) or the
// same stream (its completions are reported in ticket order).
bool DmaEngine::behind_held(const DmaRequest& r, size_t held) const {
  for (size_t i = 0; i < held; ++i) {
    if (held_[i].aperture == r.aperture || held_[i].stream == r.stream) return true;
  }
  return false;
}

// Sets `r` aside; its stream counts its share of the held list, which
// DmaStream::submit limits (one stopped peer does not fill the list).
void DmaEngine::hold(const DmaRequest& r) {
  held_.push_back(r);
  auto& n = r.stream->held_;
  n.store(n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

void DmaEngine::note_released(const DmaRequest& r) {
  auto& n = r.stream->held_;
  n.store(n.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
}

// The fast path: nothing held, and the target resident (the aperture's one
// state comparison); the deadline is already expired without a clock read.
void DmaEngine::perform(const DmaRequest& r, bool is_inline) {
  if (!held_.empty() && behind_held(r, held_.size())) {
    hold(r);  // within the capacity reserved: drain() checks
    return;
  }
  const Errc e = try_write(r, Deadline::already_expired());
  if (e == Errc::kTimeout) {
    hold(r);
    return;
  }
  complete(r, e, is_inline);
}

// Tries the held requests again, in order, keeping those still held (and
// those behind them). None waits for its endpoint: one not resident asks
// for residency and is tried at the next pass.
void DmaEngine::retry_held() {
  size_t kept = 0;
  for (size_t i = 0; i < held_.size(); ++i) {
    const DmaRequest r = held_[i];
    if (behind_held(r, kept)) {
      held_[kept++] = r;
      continue;
    }
    const Errc e = try_write(r, Deadline::already_expired());
    if (e == Errc::kTimeout) {
      held_[kept++] = r;
      continue;
    }
    note_released(r);
    complete(r, e, false);
  }
  held_.resize(kept);
}

}  // namespace clan
