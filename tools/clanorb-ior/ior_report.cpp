#include "tools/clanorb-ior/ior_report.hpp"

#include <cstdio>
#include <string>

#include "orb_transports/common/cdr_reader.hpp"
#include "orb_transports/common/component_usability.hpp"
#include "orb_transports/common/fabric.hpp"
#include "orb_transports/common/ior_component.hpp"

namespace clanorb::ior_tool {
namespace {

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// omniORB's and the OMG's tags a clanorb IOR may carry; others by number only.
const char* standard_tag_name(uint32_t tag) {
  switch (tag) {
    case 0: return "TAG_ORB_TYPE";
    case 1: return "TAG_CODE_SETS";
    case 2: return "TAG_POLICIES";
    case 3: return "TAG_ALTERNATE_IIOP_ADDRESS";
    case 20: return "TAG_SSL_SEC_TRANS";
    case 33: return "TAG_CSI_SEC_MECH_LIST";
    case 36: return "TAG_TLS_SEC_TRANS";
    case 0x41545401: return "TAG_OMNIORB_BIDIR";
    case 0x41545402: return "TAG_OMNIORB_UNIX_TRANS";
    case 0x41545403: return "TAG_OMNIORB_PERSISTENT_ID";
    case 0x41545404: return "TAG_OMNIORB_RESTRICTED_CONNECTION";
    default: return nullptr;
  }
}

// An alternate IIOP address is host and port: worth showing, port 0 above all.
void print_alternate(const TaggedComponent& c, std::ostream& out) {
  CdrReader r(c.data);
  std::string host;
  uint16_t port = 0;
  if (r.read_string(host, "host") && r.read_ushort(port, "port"))
    out << host << ":" << port << (port == 0 ? "  (port 0: no address)" : "") << "\n";
  else
    out << "malformed: " << r.error() << "\n";
}

void print_other(const TaggedComponent& c, std::ostream& out) {
  const char* name = standard_tag_name(c.tag);
  out << "  " << (name ? name : "tag") << " (" << hex32(c.tag) << "): ";
  if (c.tag == 3)
    print_alternate(c, out);
  else
    out << c.data.size() << " octets\n";
}

std::string runtime_dir_line(const std::string& dir) {
  if (dir.empty()) return "(not given: not checked)";
  const std::string mine = this_runtime_dir();
  return dir + (same_directory(dir, mine) ? "  (this process's)" : "  (this process uses " + mine + ")");
}

std::string reach_line(const IorComponent& c) {
  if (c.reach.empty()) return "(none: the server serves its own host only)";
  return c.reach + "  (where nodes of other hosts reach the server's node)";
}

// Whether a clanorb client here would use the component, and at which address.
std::string verdict_line(const IorComponent& c) {
  const std::string why = why_unusable_here(c, true);
  if (!why.empty()) return "a clanorb client here does not use it: " + why;
  const std::string address = address_from_here(c);
  return "a clanorb client here uses it" + (address == c.address ? "" : ", as " + address);
}

// Returns false if the component is malformed.
bool print_clanorb(const TaggedComponent& c, std::ostream& out) {
  out << "  giop:" << transport_of_tag(c.tag) << " component (" << hex32(c.tag) << "):";
  IorComponent component;
  std::string error;
  if (!decode_ior_component(c.tag, c.data.data(), c.data.size(), component, error)) {
    out << " malformed: " << error << "\n";
    return false;
  }
  out << "\n    address      " << component.address << "\n    boot id      "
      << component.boot_id << (component.boot_id == boot_id() ? "  (this host's)" : "  (another host's)")
      << "\n    runtime dir  " << runtime_dir_line(component.runtime_dir) << "\n    reach        "
      << reach_line(component) << "\n    " << verdict_line(component) << "\n";
  return true;
}

}  // namespace

int print_ior(const Ior& ior, std::ostream& out) {
  int malformed = 0;
  out << "type id: " << ior.type_id << "\n";
  for (size_t i = 0; i < ior.profiles.size(); ++i) {
    const Profile& p = ior.profiles[i];
    out << "profile " << i + 1 << ": ";
    if (p.tag == kTagInternetIop) {
      out << "IIOP " << int{p.major} << "." << int{p.minor} << ", host " << p.host << ", port "
          << p.port << (p.port == 0 ? " (no IIOP port)" : "") << ", object key of "
          << p.object_key.size() << " octets\n";
    } else if (p.tag == kTagMultipleComponents) {
      out << "TAG_MULTIPLE_COMPONENTS\n";
    } else {
      out << "tag " << hex32(p.tag) << ", " << p.length << " octets\n";
    }
    for (const TaggedComponent& c : p.components) {
      if (!transport_of_tag(c.tag))
        print_other(c, out);
      else if (!print_clanorb(c, out))
        ++malformed;
    }
  }
  return malformed;
}

}  // namespace clanorb::ior_tool
