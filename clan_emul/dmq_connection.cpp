#include "clan_emul/dmq_connection.hpp"

#include <cstring>

#include "clan_emul/nic.hpp"
#include "clan_emul/nic_locator.hpp"
#include "clan_emul/oob_listener.hpp"
#include "clan_emul/oob_manager.hpp"

namespace clan {

namespace {

// What each side tells the other: the ring it receives into (geometry and
// cookie), the word its sender takes read pointers in, and where the NIC
// those cookies belong to is (its host and wire).
struct Hello {
  uint32_t magic;
  uint32_t version;
  uint64_t ring_bytes;
  uint64_t max_message;
  RdmaCookie ring;
  RdmaCookie read_pointer;
  NicLocator nic;
};
constexpr uint32_t kHelloMagic = 0x444d5143;  // "DMQC"
constexpr uint32_t kHelloVersion = 2;
// A peer may not make us map more than this for its ring.
constexpr uint64_t kMaxPeerRing = uint64_t{1} << 30;

}  // namespace

Result<std::unique_ptr<DmqConnection>> DmqConnection::make(Nic& nic, const DmqConfig& rx_config,
                                                           EventQueue* events, uint64_t user,
                                                           const Endpoint* endpoint) {
  std::unique_ptr<DmqConnection> c(new DmqConnection());
  if (!endpoint) {
    auto own = nic.create_endpoint();
    if (!own) return own.error();
    c->own_endpoint_ = std::move(own.value());
    endpoint = &c->own_endpoint_;
  }
  auto rx = DmqReceiver::create(nic, rx_config, events, user, endpoint);
  if (!rx) return rx.error();
  // The sender's geometry is the peer's; it is replaced in attach().
  auto tx = DmqSender::create(nic, rx_config, endpoint);
  if (!tx) return tx.error();
  c->nic_ = &nic;
  c->rx_ = std::move(rx.value());
  c->tx_ = std::move(tx.value());
  return c;
}

std::vector<std::byte> DmqConnection::hello() const {
  Hello h{kHelloMagic, kHelloVersion, rx_->config().ring_bytes, rx_->config().max_message,
          rx_->cookie(), tx_->cookie(), locate(*nic_)};
  std::vector<std::byte> blob(sizeof h);
  std::memcpy(blob.data(), &h, sizeof h);
  return blob;
}

Errc DmqConnection::attach(const std::vector<std::byte>& peer_hello, Deadline deadline) {
  Hello h;
  if (peer_hello.size() != sizeof h) return Errc::kCorrupt;
  std::memcpy(&h, peer_hello.data(), sizeof h);
  DmqConfig peer{h.ring_bytes, h.max_message};
  if (h.magic != kHelloMagic || h.version != kHelloVersion || !dmq::valid(peer) ||
      peer.ring_bytes > kMaxPeerRing) {
    return Errc::kCorrupt;
  }
  if (h.ring.nic_id != h.nic.nic_id || h.read_pointer.nic_id != h.nic.nic_id) return Errc::kCorrupt;
  if (Errc e = reach(*nic_, h.nic, deadline); e != Errc::kOk) return e;
  if (Errc e = tx_->attach(h.ring, peer); e != Errc::kOk) return e;
  return rx_->attach(h.read_pointer);
}

void DmqConnection::watch() {
  // Runs on the connection manager's thread: short, no waiting.
  oob_->set_on_down([tx = tx_.get(), rx = rx_.get()](OobState s) {
    if (s == OobState::kPeerDead) {
      tx->abort(Errc::kPeerDead);
      rx->abort(Errc::kPeerDead);
    } else {
      tx->abort(Errc::kClosed);
      rx->peer_closed();  // everything it sent is in our ring (close() fenced it)
    }
  });
}

Result<std::unique_ptr<DmqConnection>> DmqConnection::connect(Nic& nic, OobManager& oob,
                                                              const std::string& node,
                                                              uint16_t port,
                                                              const DmqConfig& rx_config,
                                                              Deadline deadline,
                                                              EventQueue* events, uint64_t user,
                                                              const Endpoint* endpoint) {
  auto c = make(nic, rx_config, events, user, endpoint);
  if (!c) return c.error();
  auto conn = oob.connect(node, port, (*c)->hello(), deadline);
  if (!conn) return conn.error();
  (*c)->oob_ = std::move(conn.value());
  if (Errc e = (*c)->attach((*c)->oob_->peer_blob(), deadline); e != Errc::kOk) {
    (*c)->oob_->disconnect();
    return e;
  }
  (*c)->watch();
  return c;
}

Result<std::unique_ptr<DmqConnection>> DmqConnection::accept(Nic& nic, OobRequest& request,
                                                             const DmqConfig& rx_config,
                                                             EventQueue* events, uint64_t user,
                                                             const Endpoint* endpoint) {
  auto c = make(nic, rx_config, events, user, endpoint);
  if (!c) {
    request.reject();
    return c.error();
  }
  if (Errc e = (*c)->attach(request.peer_blob(), Deadline::after(nic.config().wire.setup_timeout)); e != Errc::kOk) {
    request.reject();
    return e;
  }
  auto conn = request.accept((*c)->hello());
  if (!conn) return conn.error();
  (*c)->oob_ = std::move(conn.value());
  (*c)->watch();
  return c;
}

Errc DmqConnection::close() {
  // Data first, then the out-of-band goodbye, so the peer can drain. On
  // another host the data travels on the wire and the goodbye could
  // overtake it: the fence waits until the data is in the peer's ring.
  // A queue already broken (the peer died) has nothing to wait for.
  Errc e = tx_->close();
  if (e == Errc::kOk) (void)tx_->fence(Deadline::after(std::chrono::seconds(5)));
  if (oob_) oob_->disconnect();
  return e;
}

// Members go in reverse order: the OOB connection first (it disconnects and
// waits for a down-callback in progress), then the queues that callback uses.
DmqConnection::~DmqConnection() = default;

}  // namespace clan
