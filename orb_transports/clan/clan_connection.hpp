// giop:clan connection: a two-way distributed message queue (clan_emul's
// DmqConnection). Send copies a GIOP chunk into the peer's ring (PIO, or DMA
// above -ORBclanDmaThreshold); Recv copies out of our ring, where the peer's
// chunks were read in place. Readiness for omniORB's monitor is the ring's
// tripwire (see MonitoredConnection).
//
// Never throws; errors are return values, as omniORB's transports do.
#pragma once

#include <memory>
#include <string>

#include "clan_emul/dmq_connection.hpp"
#include "orb_transports/common/fabric.hpp"
#include "orb_transports/common/monitored_connection.hpp"

namespace clanorb {

class ClanConnection : public MonitoredConnection {
 public:
  // `endpoint` is null for a client-side connection (not monitored).
  ClanConnection(std::shared_ptr<Fabric> fabric, std::unique_ptr<clan::DmqConnection> dmq,
                 std::string my_address, std::string peer_address, MonitoredEndpoint* endpoint);
  ~ClanConnection() override;

  int Send(void* buf, size_t sz, const omni_time_t& deadline) override;
  int Recv(void* buf, size_t sz, const omni_time_t& deadline) override;
  // Called with omniORB's transport lock held: never blocks.
  void Shutdown() override;
  const char* myaddress() override { return my_address_.c_str(); }
  const char* peeraddress() override { return peer_address_.c_str(); }

 protected:
  bool readable() override { return dmq_->rx().readable(); }
  bool wait_readable(clan::Deadline deadline) override { return dmq_->rx().wait_readable(deadline); }
  void notify_to(clan::EventQueue* queue, uint32_t source) override {
    dmq_->rx().notify_to(queue, source);
  }

 private:
  std::shared_ptr<Fabric> fabric_;
  std::unique_ptr<clan::DmqConnection> dmq_;
  std::string my_address_, peer_address_;
  // The message being copied out by Recv: in the ring, released when consumed.
  const std::byte* rx_ptr_ = nullptr;
  size_t rx_left_ = 0;
  size_t dma_threshold_;
};

}  // namespace clanorb
