// giop:via connection: one VIPL VI (reliable delivery) with its own CLAN
// memory holding the descriptors, `buffers` receive buffers and one send
// buffer, all registered once.
//
// Flow control is by credits, paper 001 style: a credit is a posted receive
// descriptor. All of them are posted as soon as the connection is made
// (VIPL cannot destroy a VI with receives posted, so a failed connect must
// leave none), and each goes back to the peer through the cookie
// queue once Recv has copied its message out: just before this side waits or
// after it sends, so not between a request's arrival and its reply, or at
// once when half of them are out. The VI defers sends
// (sect. 3.7.1): a send that finds no credit waits for one instead of
// overrunning the peer.
//
// Send copies a GIOP chunk (at most one buffer) into the send buffer and
// posts it: VIPL moves it straight into the peer's receive buffer by PIO, or
// by DMA from -ORBclanDmaThreshold bytes. Recv copies out of the receive
// buffers in the order they were posted.
//
// On the server side every VI's receive queue reports to the endpoint's
// completion queue (see ViaEndpoint), but only while omniORB has the
// connection armed (VipClanCQNotify): a connection a thread is serving wakes
// no monitor, as with giop:clan. Readiness is VipClanRecvReady, a look that
// dequeues nothing, so only the thread reading the connection ever takes its
// descriptors.
//
// Never throws; errors are return values, as omniORB's transports do.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "orb_transports/common/monitored_connection.hpp"
#include "orb_transports/via/via_nic.hpp"

namespace clanorb {

class ViaEndpoint;

class ViaConnection : public MonitoredConnection {
 public:
  // `endpoint` (server side) gives the completion queue; null for a client.
  ViaConnection(std::shared_ptr<ViaNic> nic, ViaEndpoint* endpoint);
  ~ViaConnection() override;
  // Makes the VI with its memory, not yet connected and with no receive
  // posted (see post_receives); false, logged, if a resource ran out.
  bool open();
  // Posts every receive buffer: once connected, never before (a VI whose
  // connection fails could not be destroyed with receives posted on it).
  // The peer's sends wait for them meanwhile (DeferSends).
  bool post_receives();

  VIP_VI_HANDLE vi() const { return vi_; }
  // Once connected (VipConnectRequest / VipConnectAccept on vi()).
  void set_addresses(std::string mine, std::string peer);

  int Send(void* buf, size_t sz, const omni_time_t& deadline) override;
  int Recv(void* buf, size_t sz, const omni_time_t& deadline) override;
  // Called with omniORB's transport lock held: does not wait for the peer.
  void Shutdown() override;
  const char* myaddress() override { return my_address_.c_str(); }
  const char* peeraddress() override { return peer_address_.c_str(); }

 protected:
  bool readable() override;
  bool wait_readable(clan::Deadline deadline) override;
  // Arms or mutes the VI's reports to the endpoint's completion queue.
  void notify_to(clan::EventQueue* queue, uint32_t) override;

 private:
  static constexpr uint8_t kEmpty = 0, kDone = 1, kFailed = 2;
  VIP_DESCRIPTOR* descriptor(size_t i) const;
  std::byte* buffer(size_t i) const;  // receive buffer i
  std::byte* send_buffer() const;
  // Under rx_mu_: takes every completed receive descriptor VIPL holds.
  void harvest();
  void mark(VIP_DESCRIPTOR* d, bool ok);
  bool post_receive(size_t i);
  // Under rx_mu_: posts the buffers Recv has emptied since the last time.
  void repost_consumed();

  std::shared_ptr<ViaNic> nic_;
  ViaEndpoint* via_endpoint_;
  VIP_VI_HANDLE vi_ = nullptr;
  // The receive buffers, in a CLAN region: a peer that holds a cookie of
  // one may write all of it. Descriptors and the send buffer live apart, in
  // memory no peer can reach, so what the library writes there (a received
  // message's length) stays as it was checked.
  std::byte* rx_mem_ = nullptr;
  VIP_MEM_HANDLE rx_mh_ = 0;
  std::byte* own_mem_ = nullptr;  // descriptors (buffers_ receive, 1 send), then the send buffer
  VIP_MEM_HANDLE own_mh_ = 0;
  size_t buffers_ = 0, buffer_bytes_ = 0;
  std::string my_address_, peer_address_;

  // Receive side: buffers complete in the order they were posted, so the
  // next message is always in buffer next_rx_.
  std::mutex rx_mu_;
  std::vector<uint8_t> rx_state_;
  size_t next_rx_ = 0;
  size_t rx_off_ = 0;
  bool shut_down_ = false;  // under rx_mu_: Shutdown was called
  size_t unposted_ = 0;  // emptied buffers not posted again yet (before next_rx_)

  // Send side (omniORB sends on a connection from one thread at a time).
  bool send_pending_ = false;  // the send buffer is still being sent
};

}  // namespace clanorb
