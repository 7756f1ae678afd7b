#include "orb_transports/otp/otp_timer_service.hpp"

#include "clan_emul/deadline.hpp"

namespace clanorb {

OtpTimerService& OtpTimerService::instance() {
  // Never destroyed: connections owned by other static objects may still
  // call it during exit.
  static auto* s = new OtpTimerService();
  return *s;
}

OtpTimerService::OtpTimerService() {
  thread_ = std::thread([this] { run(); });
  thread_.detach();
}

void OtpTimerService::schedule(OtpTimerClient* c, uint64_t due) {
  std::lock_guard lock(mu_);
  if (auto it = when_.find(c); it != when_.end() && it->second == due) return;
  unschedule_locked(c);
  if (due == 0) return;
  due_.emplace(due, c);
  when_[c] = due;
  // Wake the thread only if it would sleep past this: during steady traffic
  // every call moves its timers later, and that must cost no wake-up.
  if (due < sleeping_until_) {
    ++notifications_;
    cv_.notify_one();
  }
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

void OtpTimerService::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    if (due_.empty()) {
      sleeping_until_ = UINT64_MAX;
      cv_.wait(lock);
      continue;
    }
    const uint64_t now = clan::now_ns();
    auto first = due_.begin();
    if (first->first > now) {
      sleeping_until_ = first->first;
      cv_.wait_for(lock, std::chrono::nanoseconds(first->first - now));
      continue;
    }
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
}

}  // namespace clanorb
