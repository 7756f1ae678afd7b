// The process's VIPL NIC for giop:via, shared by its endpoints and
// connections: one VipOpenNic (node name "via<pid>" unless an endpoint names
// one; it must differ from the clan/otp node) and one protection tag. Created
// on first use; lives until the last user is gone and the ORB was destroyed.
// With -ORBclanHost the NIC has a wire and its node a tcp listener at that
// address, as the fabric's NIC has (fabric.hpp), so that VIs of other hosts
// connect to it as "NAME@HOST:PORT".
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "via/vipl.h"

namespace clanorb {

class ViaNic {
 public:
  // The process's NIC, opening it under `node` (or the default name) if
  // needed. Null, with a logged reason, if it cannot be opened, or if `node`
  // is given and differs from the open NIC's name.
  static std::shared_ptr<ViaNic> get(const std::string& node = "");
  // Drops the process's reference (when the last ORB is destroyed).
  static void release();
  ~ViaNic();

  VIP_NIC_HANDLE handle() const { return nic_; }
  VIP_PROTECTION_HANDLE ptag() const { return ptag_; }
  const std::string& node() const { return node_; }
  // "HOST:PORT" where nodes of other hosts reach this one (-ORBclanHost);
  // empty without it, or when its wire failed.
  const std::string& reach() const { return reach_; }
  // The open NIC's reach(), without opening one: what giop:via's IOR
  // components publish.
  static std::string published_reach();
  // Discriminators (ports) of this process's endpoints: one endpoint each.
  bool claim_port(uint16_t port);
  void free_port(uint16_t port);

 private:
  ViaNic() = default;
  VIP_NIC_HANDLE nic_ = nullptr;
  VIP_PROTECTION_HANDLE ptag_ = nullptr;
  std::string node_;
  std::string reach_;
  std::mutex mu_;
  std::set<uint16_t> ports_;
};

// A VIPL network address with room for any host and discriminator.
struct ViaNetAddress {
  alignas(8) unsigned char bytes[VIP_CLAN_NET_ADDRESS_BYTES] = {};
  ViaNetAddress() = default;
  // Discriminator: the port in decimal ("" for port 0).
  ViaNetAddress(const std::string& host, uint16_t port);
  VIP_NET_ADDRESS* get() { return reinterpret_cast<VIP_NET_ADDRESS*>(bytes); }
  std::string host() const;
};

// "VIP_TIMEOUT" etc., for log messages.
const char* via_error_name(VIP_RETURN r);

// A VIPL failure for a log line: its name, then what the emulated NIC under
// VIPL recorded about it on this thread, e.g. "VIP_ERROR_RESOURCE: node name
// 'a' is in use by another process (...)". The caller clears that record
// (clan::clear_error) before the VIPL call, so that it is this call's.
std::string via_failure(VIP_RETURN r);

}  // namespace clanorb
