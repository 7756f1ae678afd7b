#include "orb_transports/clan/clan_connection.hpp"

#include <cstring>
#include <thread>

#include "orb_transports/common/omni_time.hpp"

OMNI_USING_NAMESPACE(omni)

namespace clanorb {

using clan::Errc;

ClanConnection::ClanConnection(std::shared_ptr<Fabric> fabric,
                               std::unique_ptr<clan::DmqConnection> dmq, std::string my_address,
                               std::string peer_address, MonitoredEndpoint* endpoint)
    : MonitoredConnection(endpoint),
      fabric_(std::move(fabric)),
      dmq_(std::move(dmq)),
      my_address_(std::move(my_address)),
      peer_address_(std::move(peer_address)),
      dma_threshold_(fabric_options().dma_threshold) {}

ClanConnection::~ClanConnection() { detach_from_endpoint(); }

int ClanConnection::Send(void* buf, size_t sz, const omni_time_t& deadline) {
  if (sz == 0) return 0;
  clan::DmqSender& tx = dmq_->tx();
  const size_t n = sz < tx.config().max_message ? sz : tx.config().max_message;
  const clan::Transfer how = dma_threshold_ != 0 && n >= dma_threshold_ ? clan::Transfer::kDma
                                                                        : clan::Transfer::kPio;
  Errc e = tx.send(buf, n, to_deadline(deadline), how);
  if (e == Errc::kOk) return static_cast<int>(n);
  return e == Errc::kTimeout ? 0 : -1;
}

int ClanConnection::Recv(void* buf, size_t sz, const omni_time_t& deadline) {
  clan::DmqReceiver& rx = dmq_->rx();
  auto* out = static_cast<std::byte*>(buf);
  size_t got = 0;
  while (got < sz) {
    if (rx_left_ == 0) {
      // Block only for the first chunk; then take what is already there.
      if (got != 0 && !rx.readable()) break;
      auto m = rx.receive(got == 0 ? to_deadline(deadline) : clan::Deadline::now());
      if (!m) {
        if (got != 0) break;  // the error shows on the next call
        return m.error() == Errc::kTimeout ? 0 : -1;
      }
      rx_ptr_ = m->data;
      rx_left_ = m->size;
      if (rx_left_ == 0) {
        rx.release();
        continue;
      }
    }
    const size_t n = sz - got < rx_left_ ? sz - got : rx_left_;
    std::memcpy(out + got, rx_ptr_, n);
    got += n;
    rx_ptr_ += n;
    rx_left_ -= n;
    if (rx_left_ == 0 && rx.release() != Errc::kOk && got == 0) return -1;
  }
  return static_cast<int>(got);
}

void ClanConnection::Shutdown() {
  // Wake our own blocked Send/Recv with an error, and tell the peer through
  // the connection manager (non-blocking): it drains what we sent, then sees
  // the close. Nothing is written to shared memory here, so a Send running
  // in another thread cannot race with us.
  dmq_->tx().abort(Errc::kClosed);
  dmq_->rx().abort(Errc::kClosed);
  dmq_->oob().disconnect();
  notify_monitor();  // a closed connection looks readable
}

}  // namespace clanorb
