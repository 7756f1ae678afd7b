#include "orb_transports/common/plugin_glue.hpp"

#include <unistd.h>

#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include <omniORB4/IOP_S.h>
#include <omniORB4/giopEndpoint.h>
#include <omniORB4/internal/initialiser.h>
#include <omniORB4/internal/transportRules.h>
#include <omniORB4/omniInterceptors.h>
#include <omniORB4/omniPolicy.h>

#include "orb_transports/common/cdr_reader.hpp"
#include "orb_transports/common/component_usability.hpp"
#include "orb_transports/common/fabric.hpp"
#include "orb_transports/common/ior_component.hpp"
#include "orb_transports/common/node_address.hpp"

OMNI_USING_NAMESPACE(omni)

namespace clanorb {
namespace {

struct Registry {
  std::mutex mu;
  std::vector<std::pair<std::string, CORBA::ULong>> transports;  // name, tag
  std::vector<std::pair<CORBA::ULong, std::string>> published;   // tag, address
  std::vector<std::pair<CORBA::ULong, std::string (*)()>> reaches;  // tag, its published reach
};
Registry& registry() {
  static Registry r;
  return r;
}

// on_orb_destroy's callbacks; filled by static initialisers, never freed.
std::vector<void (*)()>& releasers() {
  static auto* r = new std::vector<void (*)()>;
  return *r;
}

// The host addToIOR gives omniORB as the IIOP address (port 0) when a
// clanorb endpoint is published; see NodeTransportImpl::addToIOR.
bool is_placeholder_alternate(const IOP::TaggedComponent& c) {
  if (c.tag != IOP::TAG_ALTERNATE_IIOP_ADDRESS) return false;
  CdrReader r(c.component_data.get_buffer(), c.component_data.length());
  std::string host;
  uint16_t port = 1;
  r.read_string(host, "host");
  r.read_ushort(port, "port");
  return r.ok() && port == 0 && host == this_host_name();
}

// omniORB turns the placeholder into an alternate address when a tcp
// address was published before it; port 0 is no address, so it goes.
void drop_placeholder_alternates(IOP::MultipleComponentProfile& components) {
  CORBA::ULong kept = 0;
  for (CORBA::ULong i = 0; i < components.length(); ++i) {
    if (is_placeholder_alternate(components[i])) continue;
    if (kept != i) components[kept] = components[i];
    ++kept;
  }
  components.length(kept);
}

using Addresses = std::vector<std::pair<CORBA::ULong, std::string>>;  // tag, address

// The tag of the clanorb transport a "giop:<name>:<node>:<port>" address is
// of; 0 if it is none, or not such an address.
CORBA::ULong tag_of_address(const std::string& address) {
  std::lock_guard lock(registry().mu);
  for (const auto& [name, tag] : registry().transports) {
    const std::string scheme = "giop:" + name + ":";
    std::string node;
    uint16_t port = 0;
    if (address.compare(0, scheme.size(), scheme) == 0 &&
        parse_node_address(address.c_str() + scheme.size(), node, port, false))
      return tag;
  }
  return 0;
}

// The clanorb addresses of a POA's endpoint publish policy (omniORB then
// publishes only the policy's endpoints); false if it has no such policy.
bool addresses_of_publish_policy(const CORBA::PolicyList* policies, Addresses& out) {
  for (CORBA::ULong i = 0; policies && i < policies->length(); ++i) {
    CORBA::Policy_ptr policy = (*policies)[i];
    if (policy->policy_type() != omniPolicy::ENDPOINT_PUBLISH_POLICY_TYPE) continue;
    omniPolicy::EndPointPublishPolicy_var epp = omniPolicy::EndPointPublishPolicy::_narrow(policy);
    if (CORBA::is_nil(epp)) return false;  // omniORB's own IOR hook has refused it already
    const omniPolicy::EndPointPublishPolicyValue& endpoints = epp->value();
    for (CORBA::ULong e = 0; e < endpoints.length(); ++e) {
      const std::string address = endpoints[e].in();
      if (CORBA::ULong tag = tag_of_address(address)) out.emplace_back(tag, address);
    }
    return true;
  }
  return false;
}

Addresses addresses_to_publish(const CORBA::PolicyList* policies) {
  Addresses out;
  if (addresses_of_publish_policy(policies, out)) return out;
  std::lock_guard lock(registry().mu);
  return registry().published;
}

// The reach the components of `tag` publish: its transport's node's, or
// empty for a transport that stays on its host.
std::string published_reach_of(CORBA::ULong tag) {
  if (!tag_crosses_hosts(tag)) return "";
  std::string (*reach)() = &Fabric::published_reach;
  {
    std::lock_guard lock(registry().mu);
    for (const auto& [t, r] : registry().reaches)
      if (t == tag) reach = r;
  }
  return reach();  // outside the registry's lock: it takes its transport's
}

CORBA::Boolean encode_ior(omniInterceptors::encodeIOR_T::info_T& info) {
  drop_placeholder_alternates(info.iiop.components);
  const GIOP::Version& v = info.iiop.version;
  if (v.major == 1 && v.minor == 0) return 1;  // GIOP 1.0 profiles carry no components
  for (const auto& [tag, address] : addresses_to_publish(info.hints.policies)) {
    const std::vector<uint8_t> data =
        encode_ior_component({boot_id(), address, this_runtime_dir(), published_reach_of(tag)});
    IOP::TaggedComponent& c = omniIOR::newIIOPtaggedComponent(info.iiop.components);
    c.tag = tag;
    c.component_data.length(static_cast<CORBA::ULong>(data.size()));
    std::memcpy(c.component_data.get_buffer(), data.data(), data.size());
  }
  return 1;
}

bool transport_linked(CORBA::ULong tag) {
  std::lock_guard lock(registry().mu);
  for (const auto& t : registry().transports)
    if (t.second == tag) return true;
  return false;
}

// The address of a clanorb component a client here can use, or null; logs
// why not at kFallbackTraceLevel (omniORB then tries the IOR's other addresses).
giopAddress* usable_address(const IOP::TaggedComponent& c) {
  IorComponent component;
  std::string error;
  if (!decode_ior_component(c.tag, c.component_data.get_buffer(), c.component_data.length(),
                            component, error)) {
    if (omniORB::trace(kFallbackTraceLevel)) {
      log_fallback(std::string("ignoring a malformed giop:") + transport_of_tag(c.tag) +
                   " component of an object reference: " + error);
    }
    return nullptr;
  }
  const std::string why = why_unusable_here(component, transport_linked(c.tag));
  const std::string address = why.empty() ? address_from_here(component) : component.address;
  giopAddress* a = why.empty() ? giopAddress::str2Address(address.c_str()) : nullptr;
  if (!a && omniORB::trace(kFallbackTraceLevel)) {
    log_fallback("not using " + component.address + " from an object reference: " +
                 (why.empty() ? std::string("omniORB cannot parse it") : why));
  }
  return a;
}

CORBA::Boolean decode_ior(omniInterceptors::decodeIOR_T::info_T& info) {
  if (!info.has_iiop_body) return 1;
  const IOP::MultipleComponentProfile& components = info.iiop.components;
  for (CORBA::ULong i = 0; i < components.length(); ++i) {
    if (!transport_of_tag(components[i].tag)) continue;
    if (giopAddress* a = usable_address(components[i]))
      info.ior.getIORInfo()->addresses().push_back(a);
  }
  return 1;
}

// A rule that matches every address, like omniORB's "*" mask.
class MatchAll : public transportRules::Rule {
 public:
  MatchAll() : Rule("*") {}
  CORBA::Boolean match(const char*) override { return 1; }
};

// If the rules are omniORB's default (the user gave none), put ours in front.
void extend_default_rules(transportRules& rules) {
  CORBA::String_var first = rules.dumpRule(0);
  CORBA::String_var second = rules.dumpRule(1);
  if (!first || second || std::strcmp(first, "* unix,ssl,tcp") != 0) return;
  CORBA::StringSeq actions;
  {
    std::lock_guard lock(registry().mu);
    for (const auto& t : registry().transports) {
      actions.length(actions.length() + 1);
      actions[actions.length() - 1] = t.first.c_str();
    }
  }
  for (const char* builtin : {"unix", "ssl", "tcp"}) {
    actions.length(actions.length() + 1);
    actions[actions.length() - 1] = builtin;
  }
  rules.reset();
  rules.addRule(new MatchAll(), actions);
}

// omniORB's base has no virtual destructor; ours is a static, never deleted.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnon-virtual-dtor"
class Initialiser final : public omniInitialiser {
 public:
  // Runs at the end of every ORB_init, after omniORB's own set-up.
  void attach() override {
    omniORB::getInterceptors()->encodeIOR.add(encode_ior);
    omniORB::getInterceptors()->decodeIOR.add(decode_ior);
    extend_default_rules(transportRules::clientRules());
    extend_default_rules(transportRules::serverRules());
  }
  // orb->destroy(): omniORB drops the interceptors itself. Connections and
  // endpoints still alive keep the fabric until they go.
  void detach() override {
    {
      std::lock_guard lock(registry().mu);
      registry().published.clear();
    }
    Fabric::release();
    for (void (*release)() : releasers()) release();
  }
};
#pragma GCC diagnostic pop

}  // namespace

void register_transport(const char* name, CORBA::ULong tag) {
  static bool installed = [] {
    static Initialiser init;
    omniInitialiser::install(&init);
    return true;
  }();
  (void)installed;
  register_orb_options();
  std::lock_guard lock(registry().mu);
  registry().transports.emplace_back(name, tag);
}

void publish_reach_with(CORBA::ULong tag, std::string (*published_reach)()) {
  std::lock_guard lock(registry().mu);
  registry().reaches.emplace_back(tag, published_reach);
}

void on_orb_destroy(void (*release)()) { releasers().push_back(release); }

const std::string& this_host_name() {
  static const std::string name = [] {
    // Linux's host names (64 bytes at most) fit: gethostname cannot fail here.
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    return std::string(host);
  }();
  return name;
}

void log_fallback(const std::string& what) {
  omniORB::logger l;
  l << "clanorb: " << what.c_str() << "; omniORB tries the reference's other addresses, if any\n";
}

void publish_address(CORBA::ULong tag, const std::string& address) {
  std::lock_guard lock(registry().mu);
  for (const auto& p : registry().published)
    if (p.first == tag && p.second == address) return;
  registry().published.emplace_back(tag, address);
}

}  // namespace clanorb
