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
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

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
  bool drain(uint64_t upto);
  void wake_engine();
  struct Loop;  // the io_context the thread blocks in: Asio stays in the .cpp

  std::vector<Slot> slots_;
  const uint64_t mask_;
  alignas(64) std::atomic<uint64_t> tail_{0};
  alignas(64) std::atomic<uint64_t> head_{0};
  alignas(64) std::atomic<uint32_t> sleeping_{0};
  std::atomic<bool> stop_{false};
  alignas(64) std::atomic<uint32_t> performer_{0};  // 1: someone is performing
  const bool inline_when_idle_;
  std::atomic<uint64_t> performed_{0};
  std::atomic<uint64_t> performed_inline_{0};
  std::chrono::nanoseconds spin_budget_;
  std::unique_ptr<Loop> loop_;
  std::thread thread_;
};

}  // namespace clan
