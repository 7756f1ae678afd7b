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

#include "orb_transports/common/fabric.hpp"

OMNI_USING_NAMESPACE(omni)

namespace clanorb {
namespace {

struct Registry {
  std::mutex mu;
  std::vector<std::pair<std::string, CORBA::ULong>> transports;  // name, tag
  std::vector<std::pair<CORBA::ULong, std::string>> published;   // tag, address
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

CORBA::Boolean encode_ior(omniInterceptors::encodeIOR_T::info_T& info) {
  const GIOP::Version& v = info.iiop.version;
  if (v.major == 1 && v.minor == 0) return 1;  // GIOP 1.0 profiles carry no components
  std::lock_guard lock(registry().mu);
  for (const auto& [tag, address] : registry().published) {
    cdrEncapsulationStream s(CORBA::ULong(0), CORBA::Boolean(1));
    s.marshalRawString(boot_id().c_str());
    s.marshalRawString(address.c_str());
    IOP::TaggedComponent& c = omniIOR::newIIOPtaggedComponent(info.iiop.components);
    c.tag = tag;
    s.setOctetSeq(c.component_data);
  }
  return 1;
}

CORBA::Boolean decode_ior(omniInterceptors::decodeIOR_T::info_T& info) {
  if (!info.has_iiop_body) return 1;
  const IOP::MultipleComponentProfile& components = info.iiop.components;
  for (CORBA::ULong i = 0; i < components.length(); ++i) {
    const IOP::TaggedComponent& c = components[i];
    std::string scheme;
    {
      std::lock_guard lock(registry().mu);
      for (const auto& [name, tag] : registry().transports)
        if (tag == c.tag) scheme = "giop:" + name + ":";
    }
    if (scheme.empty()) continue;
    try {
      cdrEncapsulationStream e(c.component_data.get_buffer(), c.component_data.length(), 1);
      CORBA::String_var boot = e.unmarshalRawString();
      CORBA::String_var address = e.unmarshalRawString();
      // Shared memory reaches only this host; the address must be of this tag's transport.
      if (boot_id() != static_cast<const char*>(boot) ||
          std::strncmp(address, scheme.c_str(), scheme.size()) != 0) {
        continue;
      }
      if (giopAddress* a = giopAddress::str2Address(address)) {
        info.ior.getIORInfo()->addresses().push_back(a);
      }
    } catch (...) {
      omniORB::logs(10, "clanorb: ignoring a malformed transport component in an IOR");
    }
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

void on_orb_destroy(void (*release)()) { releasers().push_back(release); }

void publish_address(CORBA::ULong tag, const std::string& address) {
  std::lock_guard lock(registry().mu);
  for (const auto& p : registry().published)
    if (p.first == tag && p.second == address) return;
  registry().published.emplace_back(tag, address);
}

}  // namespace clanorb
