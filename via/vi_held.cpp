// A VI's writes into its peer's channel block that found the peer's endpoint
// on the host (paper 004 sect. 3.2: a message for a non-resident endpoint is
// negatively acknowledged and retried, never dropped). None of them waits
// where it is made: a send stays queued (its records rewound, nothing of it
// published), a receive descriptor stays unpushed, a tag, doorbell or read
// pointer stays owed; progress retries them all, in order, and the VI's other
// work goes on meanwhile. Under the VI's lock.
#include "via/cq.hpp"
#include "via/vi.hpp"

namespace via {

using clan::Errc;

void Vi::flush_held() {
  held = false;
  if (!conn || state != VIP_STATE_CONNECTED) return;
  Conn& c = *conn;
  // A failure other than kTimeout means the peer is gone: what is owed to
  // it is moot, and the OOB manager reports the loss.
  bool left = c.tq_rx->owed() && !c.tq_rx->flush(peer_hold);
  left |= c.ck_rx->owed() && !c.ck_rx->flush(peer_hold);
  left |= !c.ck_tx->flush(peer_hold);
  if (c.tq_tx->owed()) {
    const Errc e = republish();
    const bool retry = e == Errc::kTimeout || e == Errc::kWouldBlock;
    if (e != Errc::kOk && !retry) return fail(VIP_STATUS_TRANSPORT_ERROR);
    left |= retry;
  }
  // Sets `held` again if one is still not pushed.
  if (Errc e = push_posts(); e != Errc::kOk && e != Errc::kTimeout) {
    return fail(VIP_STATUS_TRANSPORT_ERROR);
  }
  // A held send is the queue's tail not in flight: progress goes on to
  // process_sends, which sets `held` again if it is held still.
  held |= left;
}

void Vi::tell_held() {
  held_told = held;
  if (!held || !conn) return;
  // The queue's turn holder progresses this VI for the event, finds it held
  // and keeps retrying it (Cq::progress_held) until it is not.
  if (send_cq) send_cq->eq.notify(send_src);
  if (recv_cq && recv_cq != send_cq) recv_cq->eq.notify(recv_src);
}

}  // namespace via
