#include "clan_emul/cookie_queue.hpp"

#include <cstring>

namespace clan {

DmqConfig cookie_queue_config(size_t n) {
  DmqConfig c;
  c.max_message = sizeof(RdmaCookie);
  size_t ring = 4096;
  while (ring < n * (dmq::kHeader + sizeof(RdmaCookie))) ring <<= 1;
  c.ring_bytes = ring;
  return c;
}

Result<CookieQueueWriter> CookieQueueWriter::create(Nic& nic, size_t capacity_cookies) {
  auto s = DmqSender::create(nic, cookie_queue_config(capacity_cookies));
  if (!s) return s.error();
  CookieQueueWriter w;
  w.dmq_ = std::move(s.value());
  return w;
}

Result<CookieQueueReader> CookieQueueReader::create(Nic& nic, size_t capacity_cookies,
                                                    EventQueue* queue, uint64_t user) {
  auto r = DmqReceiver::create(nic, cookie_queue_config(capacity_cookies), queue, user);
  if (!r) return r.error();
  CookieQueueReader q;
  q.dmq_ = std::move(r.value());
  return q;
}

Result<RdmaCookie> CookieQueueReader::pop(Deadline deadline) {
  auto m = dmq_->receive(deadline);
  if (!m) return m.error();
  if (m->size != sizeof(RdmaCookie)) {
    dmq_->abort(Errc::kCorrupt);
    return Errc::kCorrupt;
  }
  RdmaCookie c;
  std::memcpy(&c, m->data, sizeof c);
  if (Errc e = dmq_->release(); e != Errc::kOk) return e;
  return c;
}

}  // namespace clan
