// Event-queue delivery for a udp channel: what the tripwire on a DMQ ring
// does for shared memory (paper 000 sect. 2.4), done by a thread of the
// channel's own. A datagram arrives in the kernel, not in our memory, so
// somebody must be awake to see it: the thread waits in a Boost.Asio
// io_context for the channel's wait fd, and starts only once a queue is
// directed at the channel.
//
// The wait fd cannot give one wake-up per arrival: it is an epoll set over
// the socket and a signal libfabric raises for every completion, readable
// while anything is unread. So the notifier works like a tripwire that the
// reader re-arms: armed, it posts once when the fd becomes readable and
// disarms; the channel re-arms it whenever a read finds nothing left. Arming
// asks libfabric first (fi_trywait, through `pending`), which also lowers
// the signal: if a completion is already waiting, the event is posted at
// once instead of waiting for the fd.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "clan_emul/error.hpp"

namespace clan {
class EventQueue;
}

namespace clan::wire {

class UdpNotifier {
 public:
  // Watches `fd` (not owned; it must outlive the notifier). `pending` says
  // whether something is there to read without blocking (fi_trywait).
  static Result<std::unique_ptr<UdpNotifier>> start(int fd, std::function<bool()> pending);
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
  explicit UdpNotifier(std::function<bool()> pending);
  void arm_now();
  void fire();

  std::unique_ptr<Loop> loop_;
  std::function<bool()> pending_;
  std::atomic<bool> armed_{false};
  mutable std::mutex mu_;
  EventQueue* queue_ = nullptr;
  uint32_t source_ = 0;
  uint64_t posted_ = 0;
};

}  // namespace clan::wire
