// The NIC's DMA engine: one background thread that performs queued transfers
// in submission order, so a later request completes after every earlier one
// (a pointer update queued after the data it covers lands after the data).
// Submitting takes no lock and makes no system call unless the engine sleeps.
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
  DmaEngine(uint32_t depth, std::chrono::nanoseconds spin_budget);
  ~DmaEngine();  // performs every queued request, then stops
  // kWouldBlock when `depth` requests are queued.
  Errc submit(const DmaRequest& request);
  uint64_t performed() const { return performed_.load(std::memory_order_relaxed); }

 private:
  struct Slot {
    std::atomic<uint64_t> seq;
    DmaRequest request;
  };
  void run();
  bool pop(DmaRequest& out);

  std::vector<Slot> slots_;
  const uint64_t mask_;
  alignas(64) std::atomic<uint64_t> tail_{0};
  alignas(64) std::atomic<uint64_t> head_{0};
  alignas(64) std::atomic<uint32_t> wakeups_{0};
  std::atomic<uint32_t> sleeping_{0};
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> performed_{0};
  std::chrono::nanoseconds spin_budget_;
  std::thread thread_;
};

}  // namespace clan
