#include "orb_transports/otp/otp_timer_service.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <thread>

#include "clan_emul/deadline.hpp"

namespace clanorb {

namespace asio = boost::asio;

struct OtpTimerService::Loop {
  asio::io_context io{1};  // run by one thread
  asio::steady_timer alarm{io};  // only the service thread touches it
  // Keeps run() going while no alarm is armed.
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
};

OtpTimerService& OtpTimerService::instance() {
  // Never destroyed: connections owned by other static objects may still
  // call it during exit.
  static auto* s = new OtpTimerService();
  return *s;
}

OtpTimerService::OtpTimerService() : loop_(std::make_unique<Loop>()) {
  std::thread([this] { loop_->io.run(); }).detach();
}

void OtpTimerService::schedule(OtpTimerClient* c, uint64_t due) {
  {
    std::lock_guard lock(mu_);
    if (auto it = when_.find(c); it != when_.end() && it->second == due) return;
    unschedule_locked(c);
    if (due == 0) return;
    due_.emplace(due, c);
    when_[c] = due;
    // Wake the thread only if it would sleep past this: during steady traffic
    // every call moves its timers later, and that must cost no wake-up.
    if (due >= sleeping_until_) return;
    ++notifications_;
  }
  asio::post(loop_->io, [this] { run_due(); });
}

uint64_t OtpTimerService::notifications() const {
  std::lock_guard lock(mu_);
  return notifications_;
}

uint64_t OtpTimerService::sleeping_until() const {
  std::lock_guard lock(mu_);
  return sleeping_until_;
}

void OtpTimerService::unschedule_locked(OtpTimerClient* c) {
  auto it = when_.find(c);
  if (it == when_.end()) return;
  for (auto [b, e] = due_.equal_range(it->second); b != e; ++b) {
    if (b->second == c) {
      due_.erase(b);
      break;
    }
  }
  when_.erase(it);
}

void OtpTimerService::forget(OtpTimerClient* c) {
  std::unique_lock lock(mu_);
  // A call in progress may schedule `c` again: wait for it to end first,
  // then take `c` out for good, in the same hold of the lock.
  idle_cv_.wait(lock, [&] { return running_ != c; });
  unschedule_locked(c);
}

void OtpTimerService::run_due() {
  std::unique_lock lock(mu_);
  for (auto first = due_.begin(); first != due_.end() && first->first <= clan::now_ns();
       first = due_.begin()) {
    sleeping_until_ = 0;  // running: anything scheduled now is seen next round
    OtpTimerClient* c = first->second;
    due_.erase(first);
    when_.erase(c);
    running_ = c;
    lock.unlock();
    c->on_timer_due();  // may call schedule() again
    lock.lock();
    running_ = nullptr;
    idle_cv_.notify_all();
  }
  const uint64_t next = due_.empty() ? UINT64_MAX : due_.begin()->first;
  sleeping_until_ = next;
  lock.unlock();
  // A time scheduled earlier from here on is posted, and runs after this.
  arm(next);
}

void OtpTimerService::arm(uint64_t due) {
  asio::steady_timer& alarm = loop_->alarm;
  if (due == UINT64_MAX) {
    alarm.cancel();
    return;
  }
  // Cancels the wait armed before: its handler sees operation_aborted. One
  // that had already fired runs run_due() once more, which finds nothing due.
  alarm.expires_at(clan::Clock::time_point(std::chrono::nanoseconds(due)));
  alarm.async_wait([this](const boost::system::error_code& e) {
    if (!e) run_due();
  });
}

}  // namespace clanorb
