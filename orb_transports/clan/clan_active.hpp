// A client-side giop:clan connection, as omniORB's strands hold it.
#pragma once

#include "orb_transports/clan/clan_connection.hpp"

namespace clanorb {

class ClanActiveConnection : public omni::giopActiveConnection, public ClanConnection {
 public:
  using ClanConnection::ClanConnection;
  // Bidirectional GIOP is not offered over giop:clan.
  omni::giopActiveCollection* registerMonitor() override { return nullptr; }
  omni::giopConnection& getConnection() override { return *this; }
};

}  // namespace clanorb
