// A VI's channel coming down: dropped when the VI is destroyed or breaks
// (the peer closed or died, or wrote garbage), its waiters woken and, when
// it breaks, its posted descriptors flushed. Under the VI's lock.
#include "via/cq.hpp"
#include "via/vi.hpp"

namespace via {

void Conn::wake() {
  if (tq_rx) tq_rx->tripwire().poke();
  if (ck_rx) ck_rx->tripwire().wake_waiters();
  if (recv_cq) recv_cq->eq.notify(recv_src);
  if (send_cq) send_cq->eq.notify(send_src);
}

void Conn::keep_pins(std::vector<std::shared_ptr<clan::Aperture>>& pins) {
  if (dma->done(orphan_until)) orphan_pins.clear();
  for (auto& p : pins) orphan_pins.push_back(std::move(p));
  pins.clear();
  orphan_until = dma->submitted();
}

void Vi::teardown(bool orderly) {
  if (!conn) return;
  std::shared_ptr<Conn> c = std::move(conn);
  // Everything queued on the DMA engine reads our send buffers and pins:
  // let it finish (local, so quick) before they go.
  c->dma->wait(c->dma->submitted(), clan::Deadline::after(std::chrono::seconds(5)));
  // In order, what we wrote lands before the peer hears of the disconnect:
  // on another host the writes travel on the wire and the disconnect on the
  // out-of-band channel, which could overtake them. So a round trip behind
  // the wire's writes first (at once on this host). A broken VI has no
  // peer left to wait for.
  if (orderly) (void)c->peer_block.fence(clan::Deadline::after(std::chrono::seconds(5)));
  if (c->oob) {
    c->oob->disconnect();
    c->oob.reset();  // waits for an on_down call in progress
  }
  c->down.store(1, std::memory_order_release);
  c->wake();
  // A request held for the peer's endpoint may still read through them:
  // they go with the stream, which performs (or fails) it first.
  for (size_t i = 0; i < sends.size(); ++i) c->keep_pins(sends[i].pins);
  remote.clear();
  last_map.reset();
}

void Vi::fail(uint32_t status) {
  teardown(false);
  state = VIP_STATE_ERROR;
  for (size_t i = 0; i < posted.size(); ++i) {
    finish_recv(posted[i], VIP_STATUS_DESC_FLUSHED_ERROR | status);
  }
  posted.clear();
  for (size_t i = 0; i < sends.size(); ++i) {
    QueuedSend& s = sends[i];
    finish_send(s, sent(s) ? s.status : VIP_STATUS_DESC_FLUSHED_ERROR | status);
  }
  sends.clear();
}

}  // namespace via
