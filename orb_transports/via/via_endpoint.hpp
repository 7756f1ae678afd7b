// giop:via endpoint: the shared monitor over VIPL. Connect requests come from
// VipConnectWait on this endpoint's discriminator (the port), and readiness
// from ONE completion queue that every accepted VI's receive queue reports
// to: AcceptAndMonitor sleeps in VipCQWait, and VipClanCQWake brings it back
// for new connections, Poke and connections that need a look.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "orb_transports/common/monitored_endpoint.hpp"
#include "orb_transports/via/via_nic.hpp"

namespace clanorb {

class ViaEndpoint : public MonitoredEndpoint {
 public:
  ViaEndpoint(std::string node, uint16_t port) : MonitoredEndpoint("giop:via", std::move(node), port) {}

  VIP_CQ_HANDLE cq() const { return cq_; }
  // A connection's VI and its event source, for completion queue entries.
  void attach(VIP_VI_HANDLE vi, uint32_t source);
  void detach(VIP_VI_HANDLE vi);

  clan::Result<uint32_t> add_source() override;
  void remove_source(uint32_t) override {}
  void signal(uint32_t source) override;

 protected:
  ~ViaEndpoint() override;
  std::string open_listener() override;
  std::optional<Acceptor> next_request(clan::Deadline deadline) override;
  void close_listener() override;
  bool open_events() override;
  std::optional<uint32_t> next_event(clan::Deadline deadline) override;

 private:
  omni::giopConnection* accept(VIP_CONN_HANDLE request, const std::string& peer);

  std::shared_ptr<ViaNic> nic_;
  bool port_claimed_ = false;
  VIP_CQ_HANDLE cq_ = nullptr;
  std::mutex mu_;
  uint32_t next_source_ = 1;
  std::vector<uint32_t> signalled_;
  // Sources of the completions taken off the CQ in one go, each once, in
  // order (monitor thread only).
  std::deque<uint32_t> completed_;
  std::unordered_map<VIP_VI_HANDLE, uint32_t> vis_;
};

}  // namespace clanorb
