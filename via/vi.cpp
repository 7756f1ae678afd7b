// A VI's connection over time (paper 001 sect. 3.3): progress made inside
// the calls (post, done, wait, CQ; there is no library thread), and the
// channel dropped when the peer goes or the VI breaks. All of it runs under
// the VI's lock.
#include "via/internal.hpp"

namespace via {

void Conn::wake() {
  if (tq_rx) tq_rx->tripwire().poke();
  if (ck_rx) ck_rx->tripwire().wake_waiters();
  if (recv_cq) recv_cq->eq.notify(recv_src);
  if (send_cq) send_cq->eq.notify(send_src);
}

void Vi::progress() {
  if (!conn || state != VIP_STATE_CONNECTED) return;
  const int down = conn->down.load(std::memory_order_acquire);
  if (conn->tq_rx->readable()) poll_records();  // what the peer sent before it went is ours
  if (!conn) return;
  if (down != 0) return fail(down == 2 ? VIP_STATUS_TRANSPORT_ERROR : 0);
  if (sends.empty()) return;
  complete_sends();
  // Sends not yet in flight are the tail of the queue.
  if (conn && !sends.empty() && !sends.back().in_flight) process_sends();
}

void Vi::teardown() {
  if (!conn) return;
  std::shared_ptr<Conn> c = std::move(conn);
  if (c->oob) {
    c->oob->disconnect();
    c->oob.reset();  // waits for an on_down call in progress
  }
  // Everything queued on the DMA engine reads our send buffers and pins:
  // let it finish (local, so quick) before they go.
  c->dma->wait(c->dma->submitted(), clan::Deadline::after(std::chrono::seconds(5)));
  c->down.store(1, std::memory_order_release);
  c->wake();
  for (size_t i = 0; i < sends.size(); ++i) sends[i].pins.clear();
  remote.clear();
  last_map.reset();
}

void Vi::fail(uint32_t status) {
  teardown();
  state = VIP_STATE_ERROR;
  for (size_t i = 0; i < posted.size(); ++i) {
    finish_recv(posted[i], VIP_STATUS_DESC_FLUSHED_ERROR | status);
  }
  posted.clear();
  for (size_t i = 0; i < sends.size(); ++i) {
    QueuedSend& s = sends[i];
    finish_send(s, s.in_flight ? s.status : VIP_STATUS_DESC_FLUSHED_ERROR | status);
  }
  sends.clear();
}

}  // namespace via
