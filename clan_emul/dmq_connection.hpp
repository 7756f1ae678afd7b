// A two-way message connection between two NICs: a distributed message queue
// in each direction, set up over the out-of-band connection manager (the
// handshake carries each side's ring geometry and RDMA cookies) and torn down
// with it. If the peer process dies, the connection manager reports it
// (within OobConfig::peer_timeout, usually milliseconds on one host) and both
// queues break with kPeerDead: blocked senders and receivers wake up.
//
// Thread safety: one thread may send while another receives.
#pragma once

#include <memory>
#include <string>

#include "clan_emul/dmq_receiver.hpp"
#include "clan_emul/dmq_sender.hpp"
#include "clan_emul/endpoint.hpp"
#include "clan_emul/oob_connection.hpp"

namespace clan {

class EventQueue;
class Nic;
class OobManager;
class OobRequest;

class DmqConnection {
 public:
  // Connects to a listener on `node`:`port`. `rx_config` sizes the ring this
  // side receives into. With `events`, the receive ring's tripwire posts
  // there (value `user`), so one thread can watch many connections.
  // The connection's regions and apertures belong to `endpoint` when one is
  // given (several connections sharing one endpoint: paper 004's single
  // virtual network), else to an endpoint of its own.
  static Result<std::unique_ptr<DmqConnection>> connect(Nic& nic, OobManager& oob,
                                                        const std::string& node, uint16_t port,
                                                        const DmqConfig& rx_config,
                                                        Deadline deadline,
                                                        EventQueue* events = nullptr,
                                                        uint64_t user = 0,
                                                        const Endpoint* endpoint = nullptr);
  // Accepts a pending request from a listener. A request whose handshake
  // blob is malformed is rejected with kCorrupt.
  static Result<std::unique_ptr<DmqConnection>> accept(Nic& nic, OobRequest& request,
                                                       const DmqConfig& rx_config,
                                                       EventQueue* events = nullptr,
                                                       uint64_t user = 0,
                                                       const Endpoint* endpoint = nullptr);
  ~DmqConnection();

  DmqSender& tx() { return *tx_; }
  DmqReceiver& rx() { return *rx_; }
  OobConnection& oob() { return *oob_; }
  // Orderly close: the peer drains what was sent, then sees kClosed.
  Errc close();

 private:
  DmqConnection() = default;
  static Result<std::unique_ptr<DmqConnection>> make(Nic& nic, const DmqConfig& rx_config,
                                                     EventQueue* events, uint64_t user,
                                                     const Endpoint* endpoint);
  std::vector<std::byte> hello() const;
  Errc attach(const std::vector<std::byte>& peer_hello, Deadline deadline);
  void watch();

  // Declared first, so released last: its regions and apertures go before it.
  Endpoint own_endpoint_;
  Nic* nic_ = nullptr;
  std::unique_ptr<DmqSender> tx_;
  std::unique_ptr<DmqReceiver> rx_;
  std::shared_ptr<OobConnection> oob_;
};

}  // namespace clan
