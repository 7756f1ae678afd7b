// The NIC's DMA engine: one background thread that performs queued transfers
// in submission order, so a later request completes after every earlier one
// (a pointer update queued after the data it covers lands after the data).
// Submitting takes no lock. It makes a system call only to wake the thread:
// for requests other threads queued meanwhile (see below), or, with
// inline_when_idle off, for any request while the thread sleeps.
//
// The thread spins for the budget when idle, then blocks in an Asio
// io_context until a submitter posts a wake-up to it (the fabric's spin
// policy, spin_wait.hpp, with the io_context as the way to block).
//
// Whoever performs requests holds the performer token, so they are performed
// one at a time, in queue order. While the engine's thread is awake it takes
// them (the submitter goes on, as with a real DMA engine). While it sleeps,
// the submitter takes the token and performs the queue up to its own request
// (inline): waking the thread would cost tens of microseconds on a busy
// 2-core VM, where the copy costs a few. So once idle, the thread stays
// asleep while submitters keep up; a submitter that gives the token back
// with requests still queued (others queued them meanwhile) wakes it, so no
// submitter copies for others without bound and none is left behind.
//
// A request whose target endpoint is not resident (paper 004 sect. 3.2) is
// not waited for: it is set aside, held, and retried, so it stalls no other
// endpoint's requests (dma_held.cpp). Order is kept where it matters: a
// request never overtakes a held one to the same aperture (a protocol's
// pointer after its data) nor of the same stream (completions are reported
// in ticket order).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "clan_emul/deadline.hpp"
#include "clan_emul/error.hpp"

namespace clan {

class Aperture;
class DmaStream;

struct DmaRequest {
  Aperture* aperture;
  size_t offset;
  const void* src;  // nullptr: write `word` instead (inline 8-byte payload)
  size_t len;
  uint64_t word;
  DmaStream* stream;
  uint64_t ticket;
};

class DmaEngine {
 public:
  DmaEngine(uint32_t depth, std::chrono::nanoseconds spin_budget, bool inline_when_idle = true);
  ~DmaEngine();  // performs every queued request, then stops
  // kWouldBlock when `depth` requests are queued.
  Errc submit(const DmaRequest& request);
  // How many requests one stream may have held (set aside for a
  // non-resident target): a quarter of the list, so a peer whose endpoint
  // stays off its frame stalls its own streams only.
  uint32_t held_share() const { return held_share_; }
  uint64_t performed() const { return performed_.load(std::memory_order_relaxed); }
  // Of those, performed by a submitting thread while the engine's slept.
  uint64_t performed_inline() const { return performed_inline_.load(std::memory_order_relaxed); }

 private:
  struct Slot {
    std::atomic<uint64_t> seq;
    DmaRequest request;
  };
  void run();
  bool pop(DmaRequest& out);
  bool queued() const;
  // Takes the token and performs what is queued: the engine's thread (kAll)
  // until the queue is empty after the token is given back; a submitter up
  // to queue position `upto`, then wakes the thread if more is queued. false
  // if another thread holds the token (it will see what is queued).
  static constexpr uint64_t kAll = UINT64_MAX;
  // How long the engine sleeps between passes over its held requests
  // (unless a submission wakes it).
  static constexpr std::chrono::milliseconds kHeldRetry{1};
  bool drain(uint64_t upto);
  void wake_engine();
  // dma_held.cpp: performing one request, and the held ones.
  void perform(const DmaRequest& r, bool is_inline);
  void complete(const DmaRequest& r, Errc e, bool is_inline);
  bool behind_held(const DmaRequest& r, size_t held) const;
  void retry_held();
  void hold(const DmaRequest& r);
  void note_released(const DmaRequest& r);
  bool has_held() const { return held_count_.load(std::memory_order_seq_cst) != 0; }
  struct Loop;  // the io_context the thread blocks in: Asio stays in the .cpp

  std::vector<Slot> slots_;
  const uint64_t mask_;
  alignas(64) std::atomic<uint64_t> tail_{0};
  alignas(64) std::atomic<uint64_t> head_{0};
  alignas(64) std::atomic<uint32_t> sleeping_{0};
  std::atomic<bool> stop_{false};
  alignas(64) std::atomic<uint32_t> performer_{0};  // 1: someone is performing
  const bool inline_when_idle_;
  const uint32_t held_share_;
  std::atomic<uint64_t> performed_{0};
  std::atomic<uint64_t> performed_inline_{0};
  // Requests set aside for a non-resident target, in queue order: touched
  // only by the token's holder, and never more than twice what the queue
  // holds (space reserved at construction). Their count is read by the engine's thread,
  // which does not sleep while there are any.
  std::vector<DmaRequest> held_;
  alignas(64) std::atomic<uint32_t> held_count_{0};
  std::chrono::nanoseconds spin_budget_;
  std::unique_ptr<Loop> loop_;
  std::thread thread_;
};

}  // namespace clan
