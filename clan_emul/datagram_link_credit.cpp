// The credit flow control of a DatagramLink (datagram_link.hpp, "Credit
// design"): control frames (acks and probes), the credit a data frame
// carries, and a sender's wait for credit.
#include "clan_emul/datagram_link.hpp"

#include <algorithm>

#include "clan_emul/datagram_link_frame.hpp"

namespace clan {

using namespace datagram_link_detail;

void DatagramLink::send_control(uint32_t type, uint64_t value) {
  // Under tx_mu_. Never waits for ring space: no room = lost.
  LinkHeader h{type, 0, value};
  const uint64_t spoiled = tx_->spoiled();
  const Errc e = tx_->send(&h, sizeof h, Deadline::already_expired());
  const bool lost = e != Errc::kOk || tx_->spoiled() != spoiled;
  if (type == kAck) {
    acks_sent_.fetch_add(1, std::memory_order_relaxed);
    if (lost) acks_lost_.fetch_add(1, std::memory_order_relaxed);
  } else {
    probes_sent_.fetch_add(1, std::memory_order_relaxed);
    if (lost) probes_lost_.fetch_add(1, std::memory_order_relaxed);
  }
}

// Sends the pending ack if tx_mu_ is free; otherwise its holder sends it when
// it lets go (it calls this after unlocking, and the pending value is set
// before our try_lock, so one of the two sees it).
void DatagramLink::flush_control() {
  while (pending_ack_.load(std::memory_order_seq_cst) != 0 && tx_mu_.try_lock()) {
    const uint64_t v = pending_ack_.exchange(0, std::memory_order_seq_cst);
    if (v != 0) send_control(kAck, v - 1);
    tx_mu_.unlock();
  }
}

void DatagramLink::queue_ack_locked() {
  last_ack_ = done_locked();
  pending_ack_.store(last_ack_ + 1, std::memory_order_seq_cst);
  flush_control();
}

bool DatagramLink::take_credit_locked(uint32_t credit) {
  // Credit counts only grow, but a piggybacked value may arrive after a newer
  // standalone ack (the two are sent under different locks): a value at or
  // below what we hold says nothing. The window keeps honest values within
  // 2^31 of acked_, so the low 32 bits say which count is meant.
  const auto ahead = static_cast<int32_t>(credit - static_cast<uint32_t>(acked_));
  if (ahead <= 0) return true;
  const uint64_t value = acked_ + static_cast<uint64_t>(ahead);
  if (value > sent_.load(std::memory_order_acquire)) return false;  // credit for datagrams never sent
  acked_ = value;
  ++credit_piggybacked_;
  return true;
}

void DatagramLink::consumed_locked() {
  if (config_.window != 0 && done_locked() - last_ack_ >= ack_every_) queue_ack_locked();
}

Errc DatagramLink::wait_credit(std::unique_lock<std::mutex>& lk, uint64_t need_acked,
                               Deadline deadline) {
  if (Errc e = send_status_locked(); e != Errc::kOk) return e;
  if (acked_ >= need_acked) return Errc::kOk;
  credit_stalls_.fetch_add(1, std::memory_order_relaxed);
  auto interval = std::chrono::duration_cast<Clock::duration>(config_.probe_after);
  const auto probe_max = std::chrono::duration_cast<Clock::duration>(config_.probe_max);
  Clock::time_point next_probe = Clock::now() + interval;
  uint64_t seen_acked = acked_;
  bool pumped_once = false;
  for (;;) {
    if (Errc e = send_status_locked(); e != Errc::kOk) return e;
    if (acked_ >= need_acked) return Errc::kOk;
    if (acked_ != seen_acked) {  // progress: start the probe clock again
      seen_acked = acked_;
      interval = std::chrono::duration_cast<Clock::duration>(config_.probe_after);
      next_probe = Clock::now() + interval;
    }
    if (deadline.expired()) {
      // Even a caller that cannot wait gets the credit already in the ring.
      if (pumped_once || pumping_) return Errc::kTimeout;
      pumped_once = true;
      pump(lk, Deadline::now(), nullptr);
      continue;
    }
    const Clock::time_point now = Clock::now();
    if (now >= next_probe) {
      const uint64_t value = sent_.load(std::memory_order_relaxed);
      lk.unlock();
      {
        std::lock_guard tl(tx_mu_);
        send_control(kProbe, value);
      }
      flush_control();
      lk.lock();
      interval = std::min(interval * 2, probe_max);
      next_probe = Clock::now() + interval;
      continue;
    }
    const Deadline until(std::min(deadline.when(), next_probe));
    if (!pumping_) {
      pump(lk, until, nullptr);
    } else {
      cv_.wait_until(lk, until.when());
    }
  }
}

Errc DatagramLink::flush(Deadline deadline) {
  if (config_.window == 0) return Errc::kOk;
  std::lock_guard sl(send_mu_);
  std::unique_lock lk(rx_mu_);
  return wait_credit(lk, sent_.load(std::memory_order_relaxed), deadline);
}

}  // namespace clan
