#include "clan_emul/dma_engine.hpp"

#include <algorithm>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "clan_emul/aperture.hpp"
#include "clan_emul/counter.hpp"
#include "clan_emul/deadline.hpp"
#include "clan_emul/dma_stream.hpp"
#include "clan_emul/spin_wait.hpp"

namespace clan {

namespace asio = boost::asio;

// A wake-up is an empty handler posted to the io_context; the thread blocks
// in run_one() until one is there. Posted handlers wait in the io_context's
// queue, so one posted between the engine's last look and its block is not
// missed (nothing to watch before the look).
struct DmaEngine::Loop {
  asio::io_context io{1};  // run by the engine's thread only
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
  void watch() {}
  bool block(Deadline deadline) {
    if (deadline.is_never()) {
      io.run_one();
      return true;
    }
    return io.run_one_until(deadline.when()) != 0;
  }
  void wake() {
    count_wake_call();
    asio::post(io, [] {});
  }
};

static uint64_t round_pow2(uint32_t n) {
  uint64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

DmaEngine::DmaEngine(uint32_t depth, std::chrono::nanoseconds spin_budget, bool inline_when_idle)
    // Vyukov's queue needs two slots at least to tell full from empty.
    : slots_(round_pow2(depth < 2 ? 2 : depth)),
      mask_(slots_.size() - 1),
      inline_when_idle_(inline_when_idle),
      held_share_(static_cast<uint32_t>(std::max<uint64_t>(1, slots_.size() / 4))),
      spin_budget_(spin_budget),
      loop_(std::make_unique<Loop>()) {
  for (uint64_t i = 0; i < slots_.size(); ++i) slots_[i].seq.store(i, std::memory_order_relaxed);
  // Room for a stream's share of held requests, plus what it may have
  // queued before the engine held its first: one stream cannot fill it.
  held_.reserve(2 * slots_.size());
  thread_ = std::thread([this] { run(); });
}

DmaEngine::~DmaEngine() {
  stop_.store(true, std::memory_order_seq_cst);
  loop_->wake();
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
  // Seq_cst both: the engine announces its sleep, then looks at the queue;
  // we queued, then look at its announcement. One of us sees the other.
  if (sleeping_.load(std::memory_order_seq_cst) != 0) {
    if (inline_when_idle_) {
      drain(pos + 1);  // or the token's holder performs it
    } else {
      wake_engine();
    }
  }
  return Errc::kOk;
}

void DmaEngine::wake_engine() {
  // Seq_cst: as in submit(), the engine announces its sleep, then looks at
  // the queue; a thread that queued looks at the announcement. An engine
  // that is awake will see the queue: no wake-up to post.
  if (sleeping_.load(std::memory_order_seq_cst) != 0) loop_->wake();
}

bool DmaEngine::queued() const {
  const uint64_t pos = head_.load(std::memory_order_seq_cst);
  return slots_[pos & mask_].seq.load(std::memory_order_seq_cst) == pos + 1;
}

bool DmaEngine::drain(uint64_t upto) {
  const bool is_inline = upto != kAll;
  do {
    uint32_t free = 0;
    if (!performer_.compare_exchange_strong(free, 1, std::memory_order_seq_cst)) return false;
    // The engine's thread retries held requests, waiting for none of their
    // endpoints: the token stays free for submitters (run() paces retries).
    if (!is_inline && !held_.empty()) retry_held();
    DmaRequest r{};
    // A full held list stops taking requests: the queue fills, and
    // submitters see kWouldBlock, as they would behind a slow link.
    while (head_.load(std::memory_order_relaxed) < upto && held_.size() < held_.capacity() &&
           pop(r)) {
      perform(r, is_inline);
    }
    const bool held_full = held_.size() == held_.capacity();
    // Only the token's holder writes it: stored (seq_cst, for the engine's
    // look before it sleeps) only when it changes, which is rare.
    const auto held = static_cast<uint32_t>(held_.size());
    const uint32_t held_before = held_count_.load(std::memory_order_relaxed);
    if (held != held_before) held_count_.store(held, std::memory_order_seq_cst);
    performer_.store(0, std::memory_order_seq_cst);
    // A submitter that found the token taken left its request to us: a
    // submitter hands what is left, held requests included, to the engine's
    // thread (at once if the held list is full: a submitter never waits).
    // Requests held before are the engine's already: it retries them after
    // a bounded sleep, so only the first one held needs a wake-up.
    if (is_inline && (held_full || head_.load(std::memory_order_relaxed) >= upto)) {
      if (queued() || (held_before == 0 && held != 0)) wake_engine();
      return true;
    }
  } while (queued());
  return true;
}

bool DmaEngine::pop(DmaRequest& out) {
  uint64_t pos = head_.load(std::memory_order_relaxed);
  Slot& s = slots_[pos & mask_];
  if (s.seq.load(std::memory_order_acquire) != pos + 1) return false;
  out = s.request;
  head_.store(pos + 1, std::memory_order_release);  // read outside the token too
  s.seq.store(pos + slots_.size(), std::memory_order_release);
  return true;
}

void DmaEngine::run() {
  for (;;) {
    if (queued()) {
      // An inline drainer holding the token performs these: it is short.
      if (!drain(kAll)) cpu_relax();
      continue;
    }
    if (has_held()) {
      // Held requests wait for their endpoints (paper 004 sect. 3.2): retried
      // a pass at a time, the engine asleep between passes as when idle (a
      // submission wakes it, or a submitter performs inline). The sleep is
      // bounded, and not spun, in every wait mode.
      if (!drain(kAll)) cpu_relax();
      if (!queued() && has_held()) {
        spin_then_sleep([&] { return queued() || stop_.load(std::memory_order_seq_cst); }, 0,
                        sleeping_, *loop_, Deadline::after(kHeldRetry));
      }
      continue;
    }
    if (stop_.load(std::memory_order_acquire)) {
      if (performer_.load(std::memory_order_acquire) == 0 && !queued()) return;
      cpu_relax();
      continue;
    }
    // Idle: spin for the budget, then sleep until a submitter wakes us.
    // Seq_cst loads (queued()): they pair with a submitter's look at sleeping_.
    spin_then_sleep([&] { return queued() || has_held() || stop_.load(std::memory_order_seq_cst); },
                    spin_budget_.count(), sleeping_, *loop_, Deadline::never());
  }
}

}  // namespace clan
