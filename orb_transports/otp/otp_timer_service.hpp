// Runs omniTransport engine timers of connections nobody is waiting on: the
// client's idle acknowledgement timer (paper 002 sect. 4.1: "the only
// situation in which omniTransport is not single threaded") and a server's
// retransmissions while no thread is in Recv. One thread per process runs an
// Asio io_context whose one steady_timer is armed at the earliest due time;
// schedule() posts to it only for a time earlier than that.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

namespace clanorb {

class OtpTimerClient {
 public:
  virtual ~OtpTimerClient() = default;
  // Called on the service thread when the scheduled time has come.
  virtual void on_timer_due() = 0;
};

class OtpTimerService {
 public:
  static OtpTimerService& instance();
  // (Re)schedules `c` at absolute steady-clock ns `due` (0: unschedule).
  void schedule(OtpTimerClient* c, uint64_t due);
  // Unschedules `c` and waits until it is not being run.
  void forget(OtpTimerClient* c);
  // How often schedule() woke the thread (it does only for a time earlier
  // than the one it sleeps until), and that time (UINT64_MAX: none; 0: it
  // is running a client).
  uint64_t notifications() const;
  uint64_t sleeping_until() const;

 private:
  struct Loop;  // the io_context, its alarm and its thread: Asio stays in the .cpp
  OtpTimerService();
  // On the service thread: runs the clients that are due, then arms the alarm.
  void run_due();
  void arm(uint64_t due);
  void unschedule_locked(OtpTimerClient* c);
  mutable std::mutex mu_;
  uint64_t notifications_ = 0;
  std::multimap<uint64_t, OtpTimerClient*> due_;
  std::map<OtpTimerClient*, uint64_t> when_;
  uint64_t sleeping_until_ = UINT64_MAX;  // when the thread wakes by itself
  OtpTimerClient* running_ = nullptr;
  std::condition_variable idle_cv_;
  std::unique_ptr<Loop> loop_;
};

}  // namespace clanorb
