// The wire's progress: a Boost.Asio io_context on the wire's own thread
// watches the completion queue's and the event queue's wait descriptors,
// and a timer reads both now and then whatever the descriptors say. A
// thread spinning for the fabric reads the completion queue too (poll), so
// one that waits for a remote write sees it without a wake-up; whoever
// holds progress_mu_ handles what it reads.
#include <rdma/fi_errno.h>
#include <sys/epoll.h>

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <algorithm>
#include <chrono>
#include <cstring>

#include "clan_emul/wire/fi_loader.hpp"
#include "clan_emul/wire/wire_engine.hpp"
#include "clan_emul/wire/wire_message.hpp"

namespace clan::wire {
namespace {

constexpr auto kSweepEvery = std::chrono::milliseconds(100);
// How long after a waiter last read the queue the wire's thread still
// leaves the queue to waiters (and looks again).
constexpr auto kStandBy = std::chrono::microseconds(200);
constexpr uint64_t kStandByNs = 200'000;
constexpr size_t kBatch = 16;

}  // namespace

void WireEngine::start_loop() {
  arm_cq();
  arm_eq();
  arm_sweep();
  thread_ = std::thread([this] { io_.run(); });
}

// The loop watches the queue through a set of its own (cq_set_, an epoll
// set holding the queue's wait descriptor, or nothing while the thread
// stands down). The queue is read and fi_trywait asked before the loop
// blocks: it fails while the queue holds entries that the descriptor
// would not announce again.
void WireEngine::arm_cq() {
  if (cq_watched_) return;
  if (!(spun_recently() && stand_by())) {
    std::unique_lock lock(progress_mu_, std::try_to_lock);
    if (!lock.owns_lock()) {
      // Someone reads the queue as a spinning waiter does: stand by, not
      // try again and again for the lock (a CPU taken from the reader).
      last_spin_ns_.store(now_ns(), std::memory_order_seq_cst);
      if (stand_by()) return watch_cq_set();
      // A waiter went to sleep meanwhile: look again.
      boost::asio::post(io_, [this] { arm_cq(); });
      return;
    }
    const bool quiet = drain_until_quiet();
    lock.unlock();
    if (!quiet) {
      boost::asio::post(io_, [this] { arm_cq(); });
      return;
    }
  }
  watch_cq_set();
}

void WireEngine::watch_cq_set() {
  if (cq_watched_) return;
  cq_watched_ = true;
  cq_watch_.async_wait(boost::asio::posix::stream_descriptor::wait_read, [this](boost::system::error_code ec) {
    cq_watched_ = false;
    if (ec) return;
    arm_cq();
  });
}

// Reads the queue, then asks fi_trywait, and only then fires the
// tripwires of what it delivered (the bytes are in the region already).
// fi_trywait takes each endpoint's lock, and a waiter woken by a tripwire
// answers at once, taking its endpoint's lock to send: woken first, its
// send and the wire thread's fi_trywait meet on that lock (a futex wait
// and a wake-up more per hop). True if the descriptor will announce the
// next entry.
// A few batches at a time, so that one peer's stream of notices cannot hold
// back the other peers' wake-ups: the loop comes back for the rest.
bool WireEngine::drain_until_quiet() {
  defer_landed_ = true;
  drain_cq(kDeferredBatches);
  fid* queues[] = {&cq_->fid};
  const bool quiet = fi_trywait(fabric_, queues, 1) == FI_SUCCESS;
  defer_landed_ = false;
  for (const Landed& l : landed_) owner_.remote_write_landed(l.region, l.offset, l.length);
  landed_.clear();
  return quiet;
}

// Waiters are spinning, and reading the queue as they do: waking for
// every message would only take a CPU from them, so the queue's
// descriptor leaves the loop's set until the stand-by ends or a waiter
// going to sleep puts it back (kick, without waking this thread: the set
// is an epoll set, which any thread may change). False if a waiter went
// to sleep meanwhile: the thread watches.
bool WireEngine::stand_by() {
  if (!standing_down_.load(std::memory_order_relaxed)) {
    ::epoll_ctl(cq_set_, EPOLL_CTL_DEL, cq_fd_, nullptr);
    // Paired with kick: either the waiter going to sleep sees the
    // stand-down and puts the descriptor back, or this sees the spin it
    // cleared and does.
    standing_down_.store(true, std::memory_order_seq_cst);
  }
  if (!spun_recently()) {
    resume_watch();
    return false;
  }
  if (in_standby_) return true;
  in_standby_ = true;
  standby_.expires_after(kStandBy);
  standby_.async_wait([this](boost::system::error_code ec) {
    in_standby_ = false;
    if (ec) return;
    resume_watch();
    progress_unless_busy();
  });
  return true;
}

// Any thread: the queue's descriptor back in the loop's set, once (a
// descriptor already readable wakes the loop at once).
void WireEngine::resume_watch() {
  if (!standing_down_.exchange(false, std::memory_order_seq_cst)) return;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ::epoll_ctl(cq_set_, EPOLL_CTL_ADD, cq_fd_, &ev);
}

bool WireEngine::spun_recently() const {
  const uint64_t last = last_spin_ns_.load(std::memory_order_seq_cst);
  const uint64_t now = now_ns();
  return now < last || now - last < kStandByNs;
}

// A waiter going to sleep: the spin it did no longer holds the thread
// back (cleared even when the thread is not standing down yet, or the
// thread, woken by the message this waiter gave up on, would stand down
// for that spin and leave the message unread for a whole stand-by).
void WireEngine::kick() {
  last_spin_ns_.store(0, std::memory_order_seq_cst);
  resume_watch();
}

// The wire's thread leaves the queue to a waiter that is reading it:
// false if one is.
bool WireEngine::progress_unless_busy() {
  std::unique_lock lock(progress_mu_, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  drain_cq();
  return true;
}

void WireEngine::arm_eq() {
  fid* queues[] = {&eq_->fid};
  if (fi_trywait(fabric_, queues, 1) != FI_SUCCESS) {
    drain_eq();
    boost::asio::post(io_, [this] { arm_eq(); });
    return;
  }
  eq_watch_.async_wait(boost::asio::posix::stream_descriptor::wait_read, [this](boost::system::error_code ec) {
    if (ec) return;
    drain_eq();
    arm_eq();
  });
}

void WireEngine::arm_sweep() {
  sweep_.expires_after(kSweepEvery);
  sweep_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    progress_unless_busy();
    drain_eq();
    arm_sweep();
  });
}

void WireEngine::progress() {
  std::lock_guard lock(progress_mu_);
  drain_cq();
}

void WireEngine::poll() {
  if (live_links_.load(std::memory_order_relaxed) == 0) return;
  const uint64_t now = now_ns();
  // Written only when it moves on, so spinners do not pass the line around.
  if (now - last_spin_ns_.load(std::memory_order_relaxed) > kStandByNs / 4) {
    last_spin_ns_.store(now, std::memory_order_relaxed);
  }
  std::unique_lock lock(progress_mu_, std::try_to_lock);
  if (lock.owns_lock()) drain_cq();
}

void WireEngine::drain_cq(size_t max_batches) {
  fi_cq_data_entry entries[kBatch];
  for (size_t batch = 0; batch < max_batches; ++batch) {
    const ssize_t n = fi_cq_read(cq_, entries, kBatch);
    if (n == -FI_EAVAIL) {
      on_completion_error();
      continue;
    }
    if (n <= 0) return;
    for (ssize_t i = 0; i < n; ++i) on_completion(entries[i]);
    if (static_cast<size_t>(n) < kBatch) return;
  }
}

void WireEngine::on_completion(const fi_cq_data_entry& e) {
  if (e.flags & FI_REMOTE_CQ_DATA) {
    // Not the wire's: remote CQ data says nothing of whence it came.
    notices_dropped_.fetch_add(1, std::memory_order_relaxed);
  } else if (e.flags & FI_RECV) {
    on_receive(reinterpret_cast<uint64_t>(e.op_context), e.len);
  } else if (e.flags & FI_WRITE) {
    if (auto link = link_by_id(context_link(e.op_context))) link->staging_.completed();
  } else if (e.flags & FI_SEND) {
    auto link = link_by_id(context_link(e.op_context));
    if (!link) return;
    if (context_what(e.op_context) == kInjectContext) {
      link->inject_mark_done();
    } else {
      link->reply_done();
    }
  }
}

void WireEngine::on_completion_error() {
  fi_cq_err_entry err{};
  if (fi_cq_readerr(cq_, &err, 0) != 1) return;
  auto link = link_by_id(context_link(err.op_context));
  if (!link) return;
  if (context_what(err.op_context) == kWriteContext) link->staging_.completed();
  if (context_what(err.op_context) == kReplyContext) link->reply_done();
  if (context_what(err.op_context) == kInjectContext) link->inject_mark_done();
  // A canceled receive or a failed write: the link is going or gone.
  link_down(link->id(), err.err == FI_ECANCELED ? Errc::kClosed : Errc::kCorrupt);
}

void WireEngine::on_receive(uint64_t context, size_t len) {
  void* c = reinterpret_cast<void*>(context);
  auto link = link_by_id(context_link(c));
  const uint64_t slot = context_what(c);
  if (!link || slot >= WireLink::kReceiveSlots) return;
  const std::byte* data = link->receive_buffer(slot);
  const uint8_t op = wire_op(data, len);
  if (op == static_cast<uint8_t>(WireOp::kWriteNotice) || op == static_cast<uint8_t>(WireOp::kWriteInline)) {
    on_notice(*link, slot, data, len);
    return;
  }
  if (auto m = decode_wire_message(data, len); !m) {
    messages_dropped_.fetch_add(1, std::memory_order_relaxed);
  } else if (m->op == WireOp::kImportRequest) {
    on_import_request(*link, m->request, m->cookie);
  } else if (m->op == WireOp::kImportReply) {
    on_import_reply(*link, m->request, m->status);
  } else if (m->op == WireOp::kRevoked && link->peer_nic() != 0) {
    link->note_revoked(m->cookie.region, m->cookie.generation);
  } else {
    messages_dropped_.fetch_add(1, std::memory_order_relaxed);
  }
  link->receive_done(slot);
}

// A notice is copied out of its slot and the slot posted again before the
// write is delivered: delivery wakes the waiter, whose answer takes the
// link's lock at once, and a re-post after the wake-up would wait for it.
void WireEngine::on_notice(WireLink& link, size_t slot, const std::byte* data, size_t len) {
  std::byte message[WireLink::kReceiveBytes];
  const size_t size = std::min(len, sizeof message);
  std::memcpy(message, data, size);
  link.receive_done(slot);
  if (auto n = decode_notice_message(message, len == size ? size : 0)) {
    deliver(link, n->notice, n->inline_data);
  } else {
    notices_dropped_.fetch_add(1, std::memory_order_relaxed);
  }
}

void WireEngine::drain_eq() {
  for (;;) {
    uint32_t event = 0;
    fi_eq_cm_entry entry{};
    const ssize_t n = fi_eq_read(eq_, &event, &entry, sizeof entry, 0);
    if (n == -FI_EAVAIL) {
      on_connection_error();
      continue;
    }
    if (n < 0) return;
    on_connection_event(event, entry);
  }
}

void WireEngine::on_connection_event(uint32_t event, const fi_eq_cm_entry& entry) {
  switch (event) {
    case FI_CONNREQ:
      accept(entry.info);
      clan_fi_freeinfo(entry.info);
      return;
    case FI_CONNECTED:
      if (auto link = link_by_id(context_link(entry.fid->context))) {
        link->set_up();
        std::lock_guard lock(links_mu_);
        link_cv_.notify_all();
      }
      return;
    case FI_SHUTDOWN:
      link_down(context_link(entry.fid->context), Errc::kClosed);
      return;
    default:
      return;
  }
}

void WireEngine::on_connection_error() {
  fi_eq_err_entry err{};
  if (fi_eq_readerr(eq_, &err, 0) < 0) return;
  if (err.fid == nullptr || err.fid == &pep_->fid) return;
  link_down(context_link(err.fid->context), err.err == FI_ECONNREFUSED ? Errc::kRefused : Errc::kClosed);
}

}  // namespace clan::wire
