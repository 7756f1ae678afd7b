#include "tools/clanorb-ior/ior_structure.hpp"

#include "orb_transports/common/cdr_reader.hpp"

namespace clanorb::ior_tool {
namespace {

bool read_components(CdrReader& r, std::vector<TaggedComponent>& out) {
  uint32_t count = 0;
  if (!r.read_ulong(count, "component count")) return false;
  if (count > r.remaining() / 8) {  // each component takes at least 8 octets
    return r.fail("truncated components: " + std::to_string(count) + " announced, " +
                  std::to_string(r.remaining()) + " bytes left");
  }
  for (uint32_t i = 0; i < count; ++i) {
    TaggedComponent c;
    if (!r.read_ulong(c.tag, "component tag") || !r.read_octets(c.data, "component data"))
      return false;
    out.push_back(std::move(c));
  }
  return true;
}

bool read_iiop_body(CdrReader& r, Profile& p) {
  if (!r.read_octet(p.major, "IIOP major version") ||
      !r.read_octet(p.minor, "IIOP minor version") || !r.read_string(p.host, "IIOP host") ||
      !r.read_ushort(p.port, "IIOP port") || !r.read_octets(p.object_key, "object key")) {
    return false;
  }
  if (p.major == 1 && p.minor == 0) return true;  // IIOP 1.0 has no components
  return read_components(r, p.components);
}

// The profile's data is itself an encapsulation.
bool read_profile_data(const std::vector<uint8_t>& data, Profile& p, std::string& error) {
  if (p.tag != kTagInternetIop && p.tag != kTagMultipleComponents) return true;
  CdrReader r(data);
  const bool ok = p.tag == kTagInternetIop ? read_iiop_body(r, p) : read_components(r, p.components);
  if (!ok) error = r.error();
  return ok;
}

}  // namespace

bool decode_ior(const std::vector<uint8_t>& octets, Ior& out, std::string& error) {
  CdrReader r(octets);
  Ior ior;
  uint32_t count = 0;
  if (r.read_string(ior.type_id, "type id") && r.read_ulong(count, "profile count")) {
    for (uint32_t i = 0; i < count && r.ok(); ++i) {
      Profile p;
      std::vector<uint8_t> data;
      if (!r.read_ulong(p.tag, "profile tag") || !r.read_octets(data, "profile data")) break;
      p.length = data.size();
      std::string why;
      if (!read_profile_data(data, p, why)) {
        error = "profile " + std::to_string(i + 1) + ": " + why;
        return false;
      }
      ior.profiles.push_back(std::move(p));
    }
  }
  if (!r.ok()) {
    error = r.error();
    return false;
  }
  out = std::move(ior);
  return true;
}

}  // namespace clanorb::ior_tool
