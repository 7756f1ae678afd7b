#include "contention/link.hpp"

namespace contention {

void Link::close() {
  if (conn_) {
    conn_->close();
    return;
  }
  own_tx_->close();
  own_rx_->close();
}

clan::DmqConfig ring_config() {
  clan::DmqConfig c;
  c.ring_bytes = kRingBytes;
  c.max_message = kMaxMessage;
  return c;
}

clan::Result<BareQueues> make_bare(clan::Nic& nic) {
  auto tx = clan::DmqSender::create(nic, ring_config());
  if (!tx) return tx.error();
  auto rx = clan::DmqReceiver::create(nic, ring_config());
  if (!rx) return rx.error();
  return BareQueues{std::move(*tx), std::move(*rx)};
}

clan::Result<std::unique_ptr<Link>> attach_bare(BareQueues q, const QueueCookies& peer) {
  clan::Errc e = q.tx->attach(peer.rx);
  if (e == clan::Errc::kOk) e = q.rx->attach(peer.tx);
  if (e != clan::Errc::kOk) return e;
  return std::make_unique<Link>(std::move(q.tx), std::move(q.rx));
}

}  // namespace contention
