// Event-queue delivery for a udp channel: what the tripwire on a DMQ ring
// does for shared memory (paper 000 sect. 2.4), done by a thread of the
// channel's own. A datagram arrives in the kernel, not in our memory, so
// somebody must be awake to see it: the thread waits in a Boost.Asio
// io_context for the endpoint's socket to become readable, and starts only
// once a queue is directed at the channel.
//
// A socket stays readable while anything is unread, so the notifier works
// like a tripwire that the reader re-arms: armed, it posts once when the
// socket is readable and disarms; the channel re-arms it whenever a read
// finds nothing left. Arming queues the wait first and then looks at the
// socket, so an arrival just before the wait is not missed.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "clan_emul/error.hpp"

namespace clan {
class EventQueue;
}

namespace clan::wire {

class UdpNotifier {
 public:
  // Watches `fd` (not owned; it must outlive the notifier).
  static Result<std::unique_ptr<UdpNotifier>> start(int fd);
  ~UdpNotifier();  // stops and joins the thread
  UdpNotifier(const UdpNotifier&) = delete;
  UdpNotifier& operator=(const UdpNotifier&) = delete;

  // Where arrivals are posted (nullptr: nowhere); arms.
  void direct(EventQueue* queue, uint32_t source);
  // Arms unless armed: cheap (one atomic exchange) when it already is.
  void arm() {
    if (!armed_.load(std::memory_order_relaxed) && !armed_.exchange(true)) arm_now();
  }
  uint64_t posted() const;  // events posted so far

 private:
  struct Loop;  // Asio stays in the .cpp
  UdpNotifier();
  void arm_now();
  void fire();

  std::unique_ptr<Loop> loop_;
  std::atomic<bool> armed_{false};
  mutable std::mutex mu_;
  EventQueue* queue_ = nullptr;
  uint32_t source_ = 0;
  uint64_t posted_ = 0;
};

}  // namespace clan::wire
