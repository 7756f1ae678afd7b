#include "clan_emul/oob_shared.hpp"

namespace clan::oob_detail {

bool ConnShared::leave(OobState to) {
  OobState expected = OobState::kConnected;
  if (!state.compare_exchange_strong(expected, to, std::memory_order_acq_rel)) return false;
  { std::lock_guard g(wait_mu_); }  // a waiter between its check and its sleep sees the change
  wait_cv_.notify_all();
  return true;
}

void ConnShared::notify_down() {
  std::lock_guard g(cb_mu_);
  if (notified_) return;
  notified_ = true;
  // Moved out first: the callback may destroy the connection (and this slot).
  auto fn = std::move(on_down_);
  on_down_ = nullptr;
  if (fn) {
    try {
      fn(state.load(std::memory_order_acquire));
    } catch (...) {
      // A throwing callback must not kill the manager thread.
    }
  }
}

void ConnShared::set_on_down(std::function<void(OobState)> fn) {
  std::unique_lock g(cb_mu_);
  // Already down (reported or not yet): call it here, and the manager's later
  // notify_down() finds notified_ set. Otherwise the manager calls it, under cb_mu_.
  if (notified_ || state.load(std::memory_order_acquire) != OobState::kConnected) {
    notified_ = true;
    on_down_ = nullptr;
    g.unlock();
    if (fn) fn(state.load(std::memory_order_acquire));
    return;
  }
  on_down_ = std::move(fn);
}

void ConnShared::forget_on_down() {
  std::lock_guard g(cb_mu_);  // waits for a callback running on another thread
  on_down_ = nullptr;
}

Errc ConnShared::wait_down(Deadline d) {
  std::unique_lock g(wait_mu_);
  auto down = [this] { return state.load(std::memory_order_acquire) != OobState::kConnected; };
  if (d.is_never()) {
    wait_cv_.wait(g, down);
    return Errc::kOk;
  }
  return wait_cv_.wait_until(g, d.when(), down) ? Errc::kOk : Errc::kTimeout;
}

}  // namespace clan::oob_detail
