#include "orb_transports/otp/otp_address.hpp"

#include "clan_emul/error_detail.hpp"
#include "orb_transports/common/fabric.hpp"
#include "orb_transports/common/omni_time.hpp"
#include "orb_transports/common/plugin_glue.hpp"
#include "orb_transports/otp/otp_connection.hpp"
#include "orb_transports/otp/otp_link_config.hpp"

OMNI_USING_NAMESPACE(omni)

namespace clanorb {

namespace {
class OtpActiveConnection final : public giopActiveConnection, public OtpConnection {
 public:
  using OtpConnection::OtpConnection;
  // Before any part of the object is taken down: the timer service may be
  // calling into it (see OtpConnection::retire).
  ~OtpActiveConnection() override { retire(); }
  giopActiveCollection* registerMonitor() override { return nullptr; }  // no bidirectional GIOP
  giopConnection& getConnection() override { return *this; }
};
}  // namespace

giopActiveConnection* OtpAddress::Connect(const omni_time_t& deadline, CORBA::ULong,
                                          CORBA::Boolean& timed_out) const {
  timed_out = 0;
  auto fabric = Fabric::get("giop:otp");
  if (!fabric) return nullptr;
  // A node of another host (NAME@HOST:PORT) is reached over udp; its
  // datagrams come back to this process's -ORBclanHost.
  const bool across_hosts = node_.find('@') != std::string::npos;
  if (across_hosts && fabric_options().host.empty()) {
    if (omniORB::trace(kFallbackTraceLevel)) {
      log_fallback("cannot connect to " + address_ +
                   ": a node of another host needs this process's -ORBclanHost, where its datagrams come back");
    }
    return nullptr;
  }
  clan::Deadline d = deadline ? to_deadline(deadline) : clan::Deadline::after(std::chrono::seconds(30));
  auto link = clan::DatagramLink::connect(fabric->nic(), fabric->oob(), node_, port_,
                                          otp_link_config(across_hosts), d);
  if (!link) {
    timed_out = link.error() == clan::Errc::kTimeout;
    if (omniORB::trace(kFallbackTraceLevel))
      log_fallback("cannot connect to " + address_ + ": " + clan::error_message(link.error()));
    return nullptr;
  }
  std::string mine = "giop:otp:" + fabric->node() + ":0";
  return new OtpActiveConnection(fabric, std::move(link.value()), otp::Role::kClient, mine, address_,
                                 nullptr);
}

}  // namespace clanorb
