// One side of a request-reply stream: a send queue and a receive queue,
// either a DmqConnection's (with an endpoint) or bare ones (the
// fixed-resource build, no endpoint).
#pragma once

#include <memory>

#include "clan_emul/dmq_connection.hpp"
#include "clan_emul/dmq_receiver.hpp"
#include "clan_emul/dmq_sender.hpp"
#include "contention/protocol.hpp"

namespace contention {

class Link {
 public:
  explicit Link(std::unique_ptr<clan::DmqConnection> c) : conn_(std::move(c)), tx_(&conn_->tx()), rx_(&conn_->rx()) {}
  Link(std::unique_ptr<clan::DmqSender> tx, std::unique_ptr<clan::DmqReceiver> rx)
      : own_tx_(std::move(tx)), own_rx_(std::move(rx)), tx_(own_tx_.get()), rx_(own_rx_.get()) {}
  clan::DmqSender& tx() { return *tx_; }
  clan::DmqReceiver& rx() { return *rx_; }
  // Orderly close of both directions.
  void close();

 private:
  std::unique_ptr<clan::DmqConnection> conn_;
  std::unique_ptr<clan::DmqSender> own_tx_;
  std::unique_ptr<clan::DmqReceiver> own_rx_;
  clan::DmqSender* tx_;
  clan::DmqReceiver* rx_;
};

clan::DmqConfig ring_config();

// The bare half of the fixed-resource build: a sender and a receiver (the
// receiver posting to `events` as `user` when given), their cookies for
// the peer, attached by attach_bare().
struct BareQueues {
  std::unique_ptr<clan::DmqSender> tx;
  std::unique_ptr<clan::DmqReceiver> rx;
  QueueCookies cookies() const { return {rx->cookie(), tx->cookie()}; }
};
clan::Result<BareQueues> make_bare(clan::Nic& nic);
// Attaches to the peer's cookies and makes the link; kind errors as Errc.
clan::Result<std::unique_ptr<Link>> attach_bare(BareQueues q, const QueueCookies& peer);

}  // namespace contention
