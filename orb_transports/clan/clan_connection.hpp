// giop:clan connection: a two-way distributed message queue (clan_emul's
// DmqConnection). Send copies a GIOP chunk into the peer's ring (PIO, or DMA
// above -ORBclanDmaThreshold); Recv copies out of our ring, where the peer's
// chunks were read in place. Readiness for omniORB's monitor comes from the
// ring's tripwire, directed into the endpoint's event queue only while the
// connection is armed (setSelectable), so an unwatched connection posts no
// events at all.
//
// Never throws; errors are return values, as omniORB's transports do.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include <omniORB4/CORBA.h>
#include <omniORB4/giopEndpoint.h>

#include "clan_emul/dmq_connection.hpp"
#include "orb_transports/common/fabric.hpp"

namespace clanorb {

class ClanEndpoint;

class ClanConnection : public omni::giopConnection {
 public:
  // `endpoint` is null for a client-side connection (not monitored).
  ClanConnection(std::shared_ptr<Fabric> fabric, std::unique_ptr<clan::DmqConnection> dmq,
                 std::string my_address, std::string peer_address, ClanEndpoint* endpoint);
  ~ClanConnection() override;

  int Send(void* buf, size_t sz, const omni_time_t& deadline) override;
  int Recv(void* buf, size_t sz, const omni_time_t& deadline) override;
  // Called with omniORB's transport lock held: never blocks.
  void Shutdown() override;
  const char* myaddress() override { return my_address_.c_str(); }
  const char* peeraddress() override { return peer_address_.c_str(); }

  void setSelectable(int now = 0, CORBA::Boolean data_in_buffer = 0) override;
  void clearSelectable() override;
  CORBA::Boolean isSelectable() override { return endpoint_ != nullptr; }
  CORBA::Boolean Peek() override;

  // Monitor side (the endpoint's AcceptAndMonitor thread).
  // True if the connection is armed, not being peeked, and readable: it is
  // then disarmed and must be handed to omniORB.
  bool claim_for_dispatch();
  std::atomic<int>& pins() { return pins_; }
  uint32_t source() const { return source_; }

 private:
  static constexpr uint32_t kSelectable = 1, kDataInBuffer = 2, kPeeking = 4;
  bool readable() const { return dmq_->rx().readable(); }
  void arm();
  void disarm();

  std::shared_ptr<Fabric> fabric_;
  std::unique_ptr<clan::DmqConnection> dmq_;
  std::string my_address_, peer_address_;
  ClanEndpoint* endpoint_;
  uint32_t source_ = 0;  // our event source in the endpoint's queue
  // The message being copied out by Recv: in the ring, released when consumed.
  const std::byte* rx_ptr_ = nullptr;
  size_t rx_left_ = 0;
  std::atomic<uint32_t> flags_{0};
  std::atomic<int> pins_{0};  // monitor dispatches in progress
  size_t dma_threshold_;
};

}  // namespace clanorb
