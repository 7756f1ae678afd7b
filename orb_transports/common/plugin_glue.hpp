// What every clanorb transport shares with omniORB, written once:
// - IOR publication: a tagged component of our own per transport (format in
//   ior_component.hpp: boot id, endpoint address, runtime directory); a
//   client of the same host and runtime directory turns it into a
//   giopAddress, others ignore it (and fall back to tcp), logging why at
//   kFallbackTraceLevel;
// - the default transport rules: when the user gave no rule, ours are put in
//   front of omniORB's default "* unix,ssl,tcp";
// - the hooks are (re)installed at the end of every ORB_init.
#pragma once

#include <string>

#include <omniORB4/CORBA.h>

namespace clanorb {

// The -ORBtraceLevel at which clanorb says why a client does not use an
// IOR's clanorb address (another host, runtime directory or transport, a
// malformed component, a failed connect): omniORB then tries the IOR's other
// addresses, usually tcp. omniORB logs its own connection management at 10.
inline constexpr int kFallbackTraceLevel = 10;
// Logs "clanorb: <what>; omniORB tries the reference's other addresses, if
// any". Callers check omniORB::trace(kFallbackTraceLevel) first.
void log_fallback(const std::string& what);

// Called from a transport's static registration. `name` is the part after
// "giop:" ("clan"); `tag` its IOR component tag (outside omniORB's range).
void register_transport(const char* name, CORBA::ULong tag);
// Registers clanorb's -ORB options (done by register_transport).
void register_orb_options();
// Calls `release` when the last ORB is destroyed (after the fabric's
// reference is dropped), e.g. to drop a transport's process-wide resources.
void on_orb_destroy(void (*release)());
// The components of `tag` (a transport that crosses hosts) publish as their
// reach what `published_reach` says: the "HOST:PORT" of the transport's own
// node, empty when it serves this host only. Without it: the fabric's
// (Fabric::published_reach), whose node giop:clan and giop:otp share.
void publish_reach_with(CORBA::ULong tag, std::string (*published_reach)());
// Puts `address` ("giop:clan:node:port") in every IOR made from now on.
void publish_address(CORBA::ULong tag, const std::string& address);
// gethostname(), read once: the IIOP host clanorb endpoints give omniORB.
const std::string& this_host_name();

}  // namespace clanorb
