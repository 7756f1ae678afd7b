#include "clan_emul/dma_engine.hpp"

#include "clan_emul/aperture.hpp"
#include "clan_emul/deadline.hpp"
#include "clan_emul/dma_stream.hpp"
#include "clan_emul/spin_wait.hpp"

namespace clan {

static uint64_t round_pow2(uint32_t n) {
  uint64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

DmaEngine::DmaEngine(uint32_t depth, std::chrono::nanoseconds spin_budget)
    // Vyukov's queue needs two slots at least to tell full from empty.
    : slots_(round_pow2(depth < 2 ? 2 : depth)),
      mask_(slots_.size() - 1),
      spin_budget_(spin_budget) {
  for (uint64_t i = 0; i < slots_.size(); ++i) slots_[i].seq.store(i, std::memory_order_relaxed);
  thread_ = std::thread([this] { run(); });
}

DmaEngine::~DmaEngine() {
  stop_.store(true, std::memory_order_seq_cst);
  wakeups_.fetch_add(1, std::memory_order_seq_cst);
  futex_wake_all(&wakeups_);
  thread_.join();
}

// Vyukov's bounded MPMC queue, used here with many producers and one consumer.
Errc DmaEngine::submit(const DmaRequest& request) {
  uint64_t pos = tail_.load(std::memory_order_relaxed);
  for (;;) {
    Slot& s = slots_[pos & mask_];
    uint64_t seq = s.seq.load(std::memory_order_acquire);
    if (seq == pos) {
      if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        s.request = request;
        s.seq.store(pos + 1, std::memory_order_seq_cst);
        break;
      }
    } else if (seq < pos) {
      return Errc::kWouldBlock;  // full
    } else {
      pos = tail_.load(std::memory_order_relaxed);
    }
  }
  wake_sleepers(sleeping_, wakeups_);
  return Errc::kOk;
}

bool DmaEngine::pop(DmaRequest& out) {
  uint64_t pos = head_.load(std::memory_order_relaxed);
  Slot& s = slots_[pos & mask_];
  if (s.seq.load(std::memory_order_acquire) != pos + 1) return false;
  out = s.request;
  head_.store(pos + 1, std::memory_order_relaxed);
  s.seq.store(pos + slots_.size(), std::memory_order_release);
  return true;
}

void DmaEngine::run() {
  DmaRequest r{};
  for (;;) {
    if (pop(r)) {
      Errc e = r.src ? r.aperture->write(r.offset, r.src, r.len)
                     : r.aperture->write_word(r.offset, r.word);
      performed_.fetch_add(1, std::memory_order_relaxed);
      r.stream->complete(r.ticket, e);
      continue;
    }
    if (stop_.load(std::memory_order_acquire)) return;
    // Idle: spin for the budget, then sleep until a submitter wakes us.
    spin_then_block(
        [&] {
          const uint64_t pos = head_.load(std::memory_order_relaxed);
          return slots_[pos & mask_].seq.load(std::memory_order_acquire) == pos + 1 ||
                 stop_.load(std::memory_order_acquire);
        },
        spin_budget_.count(), sleeping_, wakeups_, Deadline::never());
  }
}

}  // namespace clan
