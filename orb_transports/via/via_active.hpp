// A client-side giop:via connection, as omniORB's strands hold it.
#pragma once

#include "orb_transports/via/via_connection.hpp"

namespace clanorb {

class ViaActiveConnection : public omni::giopActiveConnection, public ViaConnection {
 public:
  explicit ViaActiveConnection(std::shared_ptr<ViaNic> nic) : ViaConnection(std::move(nic), nullptr) {}
  // Bidirectional GIOP is not offered over giop:via.
  omni::giopActiveCollection* registerMonitor() override { return nullptr; }
  omni::giopConnection& getConnection() override { return *this; }
};

}  // namespace clanorb
