// A VI's receive side (paper 001 sect. 3.3-3.4): its receive descriptors go
// to the peer's cookie queue; the peer's transfer-queue records, each checked
// against the descriptor it names, complete them. Under the VI's lock.
#include "via/post_message.hpp"
#include "via/vi.hpp"

namespace via {

using clan::Errc;

Errc Vi::push_post(const PostedRecv& p) {
  std::byte msg[kCookieMessage];
  size_t len = encode_post(p, msg);
  // The ring holds more than a full receive queue: it is never full.
  Errc e = conn->ck_tx->push(p.seq, msg, len, peer_hold);
  if (e == Errc::kOk) pushed = p.seq + 1;
  if (e == Errc::kTimeout) held = true;  // pushed again at the next progress
  return e;
}

Errc Vi::push_posts() {
  // Usually one: the last posted. Those before it not yet pushed go first,
  // in order (the peer takes them in order).
  size_t i = posted.size();
  while (i > 0 && posted[i - 1].seq >= pushed) --i;
  for (; i < posted.size(); ++i) {
    if (Errc e = push_post(posted[i]); e != Errc::kOk) return e;
  }
  return Errc::kOk;
}

void Vi::poll_records() {
  while (conn && state == VIP_STATE_CONNECTED) {
    auto r = conn->tq_rx->peek();
    if (!r) return fail(VIP_STATUS_TRANSPORT_ERROR);  // garbage in our ring
    if (!*r) return;
    const wire::Record rec = **r;
    if (posted.empty()) return fail(VIP_STATUS_TRANSPORT_ERROR);
    PostedRecv& head = posted.front();
    if (rec.desc_seq != head.seq || rec.length > head.capacity ||
        ((rec.flags & wire::kMore) && !head.split)) {
      return fail(VIP_STATUS_TRANSPORT_ERROR);
    }
    conn->tq_rx->consume();
    if (conn->tq_rx->owed()) held = true;  // the read pointer goes at the next progress
    uint32_t status = 0;
    if (rec.flags & wire::kImmediate) {
      status |= VIP_STATUS_IMMEDIATE;
      head.d->CS.ImmediateData = rec.immediate;
    }
    if (rec.flags & wire::kMore) status |= VIP_STATUS_CLAN_MORE;
    if (rec.flags & wire::kError) {
      uint32_t e = rec.status & VIP_STATUS_ERROR_MASK;
      status |= e ? e : VIP_STATUS_TRANSPORT_ERROR;
    }
    head.d->CS.Length = (rec.flags & wire::kError) ? 0 : rec.length;
    finish_recv(head, status);
    posted.pop_front();
    if ((rec.flags & wire::kError) && reliable(*this)) return fail(0);
  }
}

}  // namespace via
