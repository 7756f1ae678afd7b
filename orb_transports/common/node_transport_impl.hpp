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
    std::string node;
    uint16_t port = 0;
    // "" or ":" -> this process's node, first free port; "node:port" otherwise.
    if (param && (!*param || !std::strcmp(param, ":"))) return new Endpoint("", 0);
    if (!parse_node_address(param, node, port, true)) return nullptr;
    return new Endpoint(node, port);
  }
  omni::giopAddress* toAddress(const char* param) override {
    std::string node;
    uint16_t port = 0;
    if (!parse_node_address(param, node, port, false)) return nullptr;
    return new Address(node, port);
  }
  CORBA::Boolean isValid(const char* param) override {
    std::string node;
    uint16_t port = 0;
    return parse_node_address(param, node, port, false);
  }
  CORBA::Boolean addToIOR(const char* param, _OMNI_NS(IORPublish)* eps) override {
    if (!isValid(param)) return 0;
    publish_address(tag_, std::string(type) + ":" + param);
    // An IOR needs an IIOP host even when only this transport is published;
    // a tcp endpoint published later replaces it.
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    IIOP::Address a;
    a.host = (const char*)host;
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
