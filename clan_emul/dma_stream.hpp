// A stream of DMA requests whose completions are reported together, in order:
// completed() is the ticket of the last request performed. Completion is also
// an event (on the stream's event queue, if it has one) and can be waited for.
// A request that fails (e.g. its cookie was revoked meanwhile) writes nothing
// and sets the stream's sticky error.
//
// Thread safety: one thread submits at a time; any thread may poll or wait.
// The stream must outlive its requests (the destructor waits for them).
#pragma once

#include <atomic>
#include <cstdint>

#include "clan_emul/deadline.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/spin_wait.hpp"

namespace clan {

class Aperture;
class DmaEngine;
class EventQueue;
class Nic;

class DmaStream {
 public:
  // With `queue`, each completion posts an event with value `user` there.
  explicit DmaStream(Nic& nic, EventQueue* queue = nullptr, uint64_t user = 0);
  ~DmaStream();
  DmaStream(const DmaStream&) = delete;
  DmaStream& operator=(const DmaStream&) = delete;

  // Queues a copy of [src, src+len) to `offset` of the aperture; `src` must
  // stay valid until the ticket completes. kWouldBlock if the engine is full.
  Result<uint64_t> write(Aperture& aperture, size_t offset, const void* src, size_t len);
  // Queues an aligned 8-byte write of `value` (carried in the request).
  Result<uint64_t> write_word(Aperture& aperture, size_t offset, uint64_t value);

  uint64_t submitted() const { return submitted_; }
  uint64_t completed() const { return completed_.load(std::memory_order_acquire); }
  bool done(uint64_t ticket) const { return completed() >= ticket; }
  // Waits until `ticket` has completed; spins, then sleeps.
  Errc wait(uint64_t ticket, Deadline deadline) const { return wait(ticket, deadline, policy_.mode); }
  // The same wait in `mode` (the NIC's by default).
  Errc wait(uint64_t ticket, Deadline deadline, WaitMode mode) const;
  // The first error of any completed request, or kOk.
  Errc error() const { return error_.load(std::memory_order_acquire); }

 private:
  friend class DmaEngine;
  void complete(uint64_t ticket, Errc result);
  Result<uint64_t> submit(Aperture& aperture, size_t offset, const void* src, size_t len,
                          uint64_t word);

  DmaEngine& engine_;
  EventQueue* queue_;
  uint32_t source_ = 0;
  WaitPolicy policy_;  // the NIC's mode and budget; its producer is the DMA engine
  uint64_t submitted_ = 0;
  // Its requests in the engine's held list: written by the engine's
  // performer only, read by the submitter (DmaEngine::held_share).
  std::atomic<uint32_t> held_{0};
  alignas(64) std::atomic<uint64_t> completed_{0};
  mutable std::atomic<uint32_t> wakeups_{0};  // futex word of waiters
  mutable std::atomic<uint32_t> sleepers_{0};
  std::atomic<Errc> error_{Errc::kOk};
  std::atomic<uint64_t> finished_{0};  // last ticket the engine is wholly done with
};

}  // namespace clan
