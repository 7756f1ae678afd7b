// The cookie queue (paper 000, Fig. 2): a distributed message queue whose
// messages are RDMA cookies. A receiver passes the cookies of its receive
// buffers to the sender through it, so the sender can target them directly.
#pragma once

#include <memory>

#include "clan_emul/dmq_receiver.hpp"
#include "clan_emul/dmq_sender.hpp"

namespace clan {

class CookieQueueWriter {
 public:
  static Result<CookieQueueWriter> create(Nic& nic, size_t capacity_cookies = 64);
  RdmaCookie cookie() const { return dmq_->cookie(); }
  Errc attach(const RdmaCookie& reader) { return dmq_->attach(reader); }
  Errc push(const RdmaCookie& c, Deadline deadline) {
    return dmq_->send(&c, sizeof c, deadline, Transfer::kPio);
  }
  DmqSender& dmq() { return *dmq_; }

 private:
  std::unique_ptr<DmqSender> dmq_;
};

class CookieQueueReader {
 public:
  static Result<CookieQueueReader> create(Nic& nic, size_t capacity_cookies = 64,
                                          EventQueue* queue = nullptr, uint64_t user = 0);
  RdmaCookie cookie() const { return dmq_->cookie(); }
  Errc attach(const RdmaCookie& writer) { return dmq_->attach(writer); }
  // The next cookie, copied out; kCorrupt if the peer sent something else.
  Result<RdmaCookie> pop(Deadline deadline);
  bool readable() const { return dmq_->readable(); }
  DmqReceiver& dmq() { return *dmq_; }

 private:
  std::unique_ptr<DmqReceiver> dmq_;
};

// Ring geometry for a queue of `n` cookies.
DmqConfig cookie_queue_config(size_t n);

}  // namespace clan
