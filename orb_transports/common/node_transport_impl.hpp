// The giopTransportImpl of a clanorb transport: endpoint and address syntax
// ("giop:<name>:<node>:<port>"), and publication in IORs through the shared
// IOR component hooks. A transport instantiates it with its Endpoint and
// Address classes (both constructible from node and port) in one static.
#pragma once

#include <unistd.h>

#include <cstring>
#include <string>

#include <omniORB4/CORBA.h>
#include <omniORB4/giopEndpoint.h>
#include <omniORB4/omniIOR.h>

#include "orb_transports/common/ior_component.hpp"
#include "orb_transports/common/node_address.hpp"
#include "orb_transports/common/plugin_glue.hpp"

namespace clanorb {

template <class Endpoint, class Address>
class NodeTransportImpl : public omni::giopTransportImpl {
 public:
  // `scheme` a string literal ("giop:clan"), `name` the rule name ("clan").
  NodeTransportImpl(const char* scheme, const char* name, CORBA::ULong ior_tag)
      : omni::giopTransportImpl(scheme), tag_(ior_tag) {
    register_transport(name, ior_tag);
  }

  omni::giopEndpoint* toEndpoint(const char* param) override {
    std::string node, reason;
    uint16_t port = 0;
    // "" or ":" -> this process's node, first free port; "node:port" otherwise.
    if (param && (!*param || !std::strcmp(param, ":"))) return new Endpoint("", 0);
    if (!parse_node_address(param, node, port, true, &reason)) {
      // omniORB's own line names no cause: this one does, at its default level.
      log_bad_node_address(1, "endpoint", type, param, reason, "[<node>]:[<port>]");
      return nullptr;
    }
    return new Endpoint(node, port);
  }
  // Also reached with addresses decoded from IORs, where a bad one is the
  // sender's problem: logged only when the user asks for connection detail.
  omni::giopAddress* toAddress(const char* param) override {
    std::string node, reason;
    uint16_t port = 0;
    if (!parse_node_address(param, node, port, false, &reason, crosses_hosts())) {
      log_bad_node_address(10, "address", type, param, reason, "<node>:<port>");
      return nullptr;
    }
    return new Address(node, port);
  }
  // Silent: omniORB asks it of every rule and publish policy entry, and logs
  // its own line when one does not fit.
  CORBA::Boolean isValid(const char* param) override {
    std::string node;
    uint16_t port = 0;
    return parse_node_address(param, node, port, false, nullptr, crosses_hosts());
  }
  // Whether this transport reaches nodes of other hosts (NAME@HOST:PORT).
  bool crosses_hosts() const { return tag_crosses_hosts(tag_); }
  // The IIOP profile of an IOR must name a host (omniORB raises
  // MARSHAL_InvalidIOR otherwise), even when only clanorb endpoints are
  // published. So this host is given with port 0, "no IIOP port": omniORB
  // takes it as the profile's address while no tcp endpoint has set one, and
  // a tcp endpoint published later replaces it. Had a tcp address come
  // first, omniORB makes ours an alternate address, which the IOR hook drops
  // (omniORB keeps the published addresses where no transport can see them).
  // `eps` is null for the ORB's own endpoints, which every IOR then carries;
  // otherwise it is a POA's endpoint publish policy, whose IORs the hook
  // gives that policy's addresses alone.
  CORBA::Boolean addToIOR(const char* param, _OMNI_NS(IORPublish)* eps) override {
    if (!isValid(param)) return 0;
    if (!eps) publish_address(tag_, std::string(type) + ":" + param);
    IIOP::Address a;
    a.host = this_host_name().c_str();
    a.port = 0;
    omniIOR::add_IIOP_ADDRESS(a, eps);
    return 1;
  }
  const omnivector<const char*>* getInterfaceAddress() override { return &no_interfaces_; }

 private:
  CORBA::ULong tag_;
  omnivector<const char*> no_interfaces_;
};

}  // namespace clanorb
