// The receiving end of a distributed message queue: it owns the ring and
// reads messages in place. Everything the sender wrote is validated before
// use (the lazy write pointer, each header); a violation breaks this queue
// with kCorrupt and nothing else. Thread safety: one thread at a time.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

#include "clan_emul/aperture.hpp"
#include "clan_emul/deadline.hpp"
#include "clan_emul/dmq_layout.hpp"
#include "clan_emul/region.hpp"
#include "clan_emul/tripwire.hpp"

namespace clan {

class EventQueue;
class Endpoint;
class Nic;

struct DmqMessage {
  const std::byte* data;  // in the ring; valid until release()
  size_t size;
};

class DmqReceiver {
 public:
  // With `queue`, the tripwire on lazy_write_i also posts events there
  // (value `user`), so one thread can watch many queues.
  // With an endpoint, the ring and the aperture onto the sender's read
  // pointer belong to it (see endpoint.hpp).
  static Result<std::unique_ptr<DmqReceiver>> create(Nic& nic, const DmqConfig& config,
                                                     EventQueue* queue = nullptr,
                                                     uint64_t user = 0,
                                                     const Endpoint* endpoint = nullptr);
  ~DmqReceiver();

  RdmaCookie cookie() const { return region_.cookie(); }
  Errc attach(const RdmaCookie& sender);

  // The next message, in place, waiting for one until the deadline.
  // kClosed once the sender closed and the ring is drained.
  Result<DmqMessage> receive(Deadline deadline);
  Result<DmqMessage> try_receive() { return receive(Deadline::now()); }
  // Consumes the message the last receive() returned and tells the sender.
  // Never waits: a read pointer that finds the sender's endpoint on the
  // host (paper 004 sect. 3.2) is owed, and written, the newest superseding
  // the older, at the next release() or receive(); a receive() that would
  // block retries it, waiting for the sender's endpoint, so a sender waiting
  // for space is never left waiting for it.
  Errc release();
  // True if a message (or the close, or an error) is waiting.
  bool readable() const;
  // Waits until readable(); false at the deadline. By the receiving thread
  // (as before a receive()): an owed read pointer is paid before it blocks.
  bool wait_readable(Deadline deadline);
  // Directs the ring's tripwire into `queue` as `source` (nullptr: nowhere),
  // e.g. only while a monitor watches this queue.
  void notify_to(EventQueue* queue, uint32_t source) {
    if (queue) redirected_.store(true, std::memory_order_relaxed);
    data_tripwire_.set_queue(queue, source);
  }

  // Tells the sender, waiting up to `hold` for its endpoint to be resident
  // (kTimeout if it stays on the host: the sender learns of it from its own
  // deadline or the OOB close). The queue is closed either way.
  Errc close(Deadline hold = Deadline::after(std::chrono::seconds(1)));
  // Breaks the queue at once (e.g. the peer died): waiters wake with `reason`.
  void abort(Errc reason);
  // The peer is gone in an orderly way: what it wrote can still be drained,
  // then receive() says kClosed.
  void peer_closed();
  Errc status() const { return status_.load(std::memory_order_acquire); }
  const DmqConfig& config() const { return config_; }
  // The ring's base, for tests that play a hostile peer.
  const Region& region() const { return region_; }

 private:
  DmqReceiver(Nic& nic, const DmqConfig& config) : nic_(nic), config_(config) {}
  uint64_t lazy_write() const;
  bool sender_closed() const;
  Errc fail(Errc e);
  // Writes the read pointer into the sender's region, waiting up to `hold`
  // for its endpoint; on kTimeout it stays owed.
  Errc write_read_pointer(Deadline hold);
  // An owed read pointer, retried before receive() blocks (dmq_receiver.cpp).
  void pay_owed(Deadline deadline);

  Nic& nic_;
  const Endpoint* endpoint_ = nullptr;
  DmqConfig config_;
  Region region_;
  Tripwire data_tripwire_;
  // notify_to() has directed the tripwire at a queue: the receiver is
  // watched by a monitor, which typically redirects it around every message
  // it takes (an omniORB server connection: armed while the call runs,
  // disarmed when the worker reads again). So receive() fetches the tripwire
  // entry's line for writing, which the sender's firing has just taken, and
  // the redirection that follows finds it here.
  std::atomic<bool> redirected_{false};
  Aperture sender_;
  // Written by the receiving thread only; readable() may look from another.
  std::atomic<uint64_t> read_i_{0};
  size_t pending_ = 0;  // bytes of the message handed out, consumed on release()
  bool owed_ = false;   // the last read pointer's write found the sender on the host
  uint64_t written_read_i_ = 0;  // the read position last written to the sender
  std::atomic<Errc> status_{Errc::kOk};
  std::atomic<bool> peer_closed_{false};
};

}  // namespace clan
