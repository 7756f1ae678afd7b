// A VI's descriptors completing: each goes to its done queue (VipSendDone,
// VipRecvDone, the waits) and, if the VI has one, to its completion queue;
// a thread asleep waiting for it is woken. Under the VI's lock.
#include "via/cq.hpp"
#include "via/nic_impl.hpp"
#include "via/vi.hpp"

namespace via {

namespace {
// One more completion. A waiter (about to be) asleep on `tripwire` whose
// ready() compares the count is woken to see it.
void count_completion(std::atomic<uint64_t>& count, uint32_t waiters, const clan::Tripwire* tripwire) {
  const uint64_t n = count.load(std::memory_order_relaxed) + 1;
  if (waiters == 0) {
    count.store(n, std::memory_order_relaxed);
    return;
  }
  count.store(n, std::memory_order_seq_cst);
  if (tripwire) tripwire->wake_waiters();
}
}  // namespace

void Vi::finish_send(QueuedSend& s, uint32_t status) {
  s.d->CS.Status = status | VIP_STATUS_DONE | VIP_STATUS_OP_SEND;
  send_done.push_back(Done{s.d, s.block});  // its block stays held until it is handed back
  s.block = nullptr;
  release_blocks(s);  // its buffers' blocks
  // A VipSendWait asleep on the cookie ring: this send may have taken the
  // descriptor it was woken for.
  count_completion(send_completions, cookie_waiters, conn ? &conn->ck_rx->tripwire() : nullptr);
  if (send_cq) send_cq->push(this, false);
}

void Vi::finish_recv(PostedRecv& p, uint32_t status) {
  p.d->CS.Status = status | VIP_STATUS_DONE | VIP_STATUS_OP_RECEIVE;
  for (MemRegion* r : p.regions) nic->release(r);  // may revoke the peer's access
  recv_done.push_back(Done{p.d, p.block});  // its block stays held until it is handed back
  p.block = nullptr;
  // A VipRecvWait in another thread, (about to be) blocked.
  count_completion(recv_completions, recv_waiters, conn ? &conn->tq_rx->tripwire() : nullptr);
  if (recv_cq && recv_notify) recv_cq->push(this, true);
}

void Vi::complete_sends() {
  while (!sends.empty() && sends.front().in_flight) {
    QueuedSend& s = sends.front();
    if (s.owed_to != 0) {
      // Its tags go with a later progress (vi_held.cpp), by PIO or behind
      // the DMA in flight then.
      if (!conn || conn->tq_tx->published() < s.owed_to) return;
      s.owed_to = 0;
      s.ticket = last_dma_ticket;
    }
    if (s.ticket != 0 && conn && !conn->dma->done(s.ticket)) return;
    uint32_t status = s.status;
    if (s.ticket != 0 && conn && conn->dma->error() != clan::Errc::kOk) {
      status |= VIP_STATUS_TRANSPORT_ERROR;
    }
    finish_send(s, status);
    sends.pop_front();
  }
}

}  // namespace via
