// What a clanorb server publishes in its IORs, decoded with omniORB's own
// API: the IIOP address is the tcp endpoint's when there is one (port 0, "no
// IIOP port", only when there is none), there is never an alternate IIOP
// address of port 0, and each clanorb endpoint has its tagged component (a
// POA's endpoint publish policy decides for that POA's references).
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "orb/orb_fixture.hpp"
#include "orb_transports/common/ior_component.hpp"
// After CORBA.h (orb_fixture.hpp), which omniIOR.h needs first.
#include <omniORB4/omniIOR.h>

using namespace clan::orbtest;

namespace {

const Transport kEveryKind{"tcp+clan+otp+via",
                           {"giop:tcp:127.0.0.1:", "giop:clan::", "giop:otp::", "giop:via::"}};
const Transport kClanThenTcp{"clan+tcp", {"giop:clan::", "giop:tcp:127.0.0.1:"}};
const Transport kClanOnly{"clan", {"giop:clan::"}};

constexpr CORBA::ULong kClanTags[] = {0x434c4130, 0x434c4131, 0x434c4132};  // CLA0..CLA2

struct IiopAddress {
  std::string host;
  CORBA::UShort port = 0;
};

// The one IIOP profile of a stringified IOR.
struct IiopProfile {
  IiopAddress address;
  std::vector<IiopAddress> alternates;  // TAG_ALTERNATE_IIOP_ADDRESS components
  std::vector<CORBA::ULong> tags;       // every component's tag
  std::vector<std::string> clanorb_addresses;
};

std::string clanorb_address_of(const IOP::TaggedComponent& c) {
  clanorb::IorComponent component;
  std::string error;
  INFO(error);
  REQUIRE(clanorb::decode_ior_component(c.tag, c.component_data.get_buffer(),
                                        c.component_data.length(), component, error));
  return component.address;
}

IiopAddress decode_alternate(const IOP::TaggedComponent& c) {
  cdrEncapsulationStream s(c.component_data.get_buffer(), c.component_data.length(), 1);
  IiopAddress a;
  CORBA::String_var host = s.unmarshalRawString();
  a.host = host.in();
  a.port <<= s;
  return a;
}

IiopProfile iiop_profile_of(const std::string& ior) {
  CORBA::Object_var obj = client_orb()->string_to_object(ior.c_str());
  REQUIRE(!CORBA::is_nil(obj));
  omniIOR* decoded = obj->_PR_getobj()->_getIOR();
  const IOP::TaggedProfileList& profiles = decoded->iopProfiles();
  std::vector<IiopProfile> found;
  for (CORBA::ULong i = 0; i < profiles.length(); ++i) {
    if (profiles[i].tag != IOP::TAG_INTERNET_IOP) continue;
    IIOP::ProfileBody body;
    IIOP::unmarshalProfile(profiles[i], body);
    IiopProfile p;
    p.address = {body.address.host.in(), body.address.port};
    for (CORBA::ULong c = 0; c < body.components.length(); ++c) {
      p.tags.push_back(body.components[c].tag);
      if (body.components[c].tag == IOP::TAG_ALTERNATE_IIOP_ADDRESS)
        p.alternates.push_back(decode_alternate(body.components[c]));
      if (clanorb::transport_of_tag(body.components[c].tag))
        p.clanorb_addresses.push_back(clanorb_address_of(body.components[c]));
    }
    found.push_back(std::move(p));
  }
  decoded->release();
  REQUIRE(found.size() == 1);
  return found[0];
}

std::string host_name() {
  char host[256] = {};
  REQUIRE(gethostname(host, sizeof host - 1) == 0);
  return host;
}

size_t count_of(const std::vector<CORBA::ULong>& tags, CORBA::ULong tag) {
  size_t n = 0;
  for (CORBA::ULong t : tags) n += t == tag;
  return n;
}

std::string described(const std::vector<IiopAddress>& addresses) {
  std::string s;
  for (const IiopAddress& a : addresses) s += " " + a.host + ":" + std::to_string(a.port);
  return s;
}

// The tcp endpoint's address is the profile's, and the only one.
void check_tcp_address_only(const IiopProfile& p) {
  CHECK(p.address.host == "127.0.0.1");
  CHECK(p.address.port != 0);
  INFO("alternate addresses:" << described(p.alternates));
  CHECK(p.alternates.empty());
}

}  // namespace

TEST_CASE("IOR of a tcp+clan+otp+via server: the tcp address and no alternate address",
          "[orb][ior]") {
  Server server(kEveryKind, Threading::kPerConnection);
  const IiopProfile p = iiop_profile_of(server.echo_ior());
  check_tcp_address_only(p);
  for (CORBA::ULong tag : kClanTags) CHECK(count_of(p.tags, tag) == 1);
  CHECK(server.stop() == 0);
}

TEST_CASE("IOR of a server publishing clan before tcp: the tcp address and no alternate address",
          "[orb][ior]") {
  Server server(kClanThenTcp, Threading::kPerConnection);
  const IiopProfile p = iiop_profile_of(server.echo_ior());
  check_tcp_address_only(p);
  CHECK(count_of(p.tags, kClanTags[0]) == 1);
  CHECK(server.stop() == 0);
}

TEST_CASE("IOR of a clan-only server: this host with port 0 and no alternate address",
          "[orb][ior]") {
  Server server(kClanOnly, Threading::kPerConnection);
  const IiopProfile p = iiop_profile_of(server.echo_ior());
  // omniORB requires a host in the IIOP profile; port 0 says there is no IIOP port.
  CHECK(p.address.host == host_name());
  CHECK(p.address.port == 0);
  CHECK(p.alternates.empty());
  CHECK(count_of(p.tags, kClanTags[0]) == 1);
  CHECK(server.stop() == 0);
}

TEST_CASE("a POA's endpoint publish policy decides the clanorb addresses of its references",
          "[orb][ior]") {
  // This process's ORB serves tcp only; the policy names a clan address.
  CORBA::Object_var obj = client_orb()->resolve_initial_references("RootPOA");
  PortableServer::POA_var root = PortableServer::POA::_narrow(obj);
  omniPolicy::EndPointPublishPolicyValue endpoints;
  endpoints.length(1);
  endpoints[0] = "giop:clan:elsewhere:5";
  CORBA::PolicyList policies;
  policies.length(1);
  policies[0] = omniPolicy::create_endpoint_publish_policy(endpoints);
  PortableServer::POA_var poa =
      root->create_POA("clan-published", PortableServer::POAManager::_nil(), policies);

  CORBA::Object_var published = poa->create_reference("IDL:echo:1.0");
  CORBA::String_var published_ior = client_orb()->object_to_string(published);
  const IiopProfile p = iiop_profile_of(published_ior.in());
  CHECK(p.clanorb_addresses == std::vector<std::string>{"giop:clan:elsewhere:5"});
  CHECK(p.address.host == host_name());
  CHECK(p.address.port == 0);
  CHECK(p.alternates.empty());

  // The policy's address is that POA's alone.
  CORBA::Object_var plain = root->create_reference("IDL:echo:1.0");
  CORBA::String_var plain_ior = client_orb()->object_to_string(plain);
  CHECK(iiop_profile_of(plain_ior.in()).clanorb_addresses.empty());
  poa->destroy(0, 0);
}
