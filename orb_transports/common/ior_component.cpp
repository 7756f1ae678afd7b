#include "orb_transports/common/ior_component.hpp"

#include "orb_transports/common/cdr_reader.hpp"

namespace clanorb {

const char* transport_of_tag(uint32_t tag) {
  switch (tag) {
    case kClanIorTag: return "clan";
    case kOtpIorTag: return "otp";
    case kViaIorTag: return "via";
    default: return nullptr;
  }
}

bool tag_crosses_hosts(uint32_t tag) { return tag == kClanIorTag || tag == kOtpIorTag || tag == kViaIorTag; }

bool scheme_crosses_hosts(const std::string& scheme) {
  for (uint32_t tag : {kClanIorTag, kOtpIorTag, kViaIorTag}) {
    if (scheme == std::string("giop:") + transport_of_tag(tag)) return tag_crosses_hosts(tag);
  }
  return false;
}

std::vector<uint8_t> encode_ior_component(const IorComponent& c) {
  CdrWriter w;
  w.write_string(c.boot_id);
  w.write_string(c.address);
  w.write_string(c.runtime_dir);
  if (!c.reach.empty()) w.write_string(c.reach);
  return w.bytes();
}

bool decode_ior_component(uint32_t tag, const uint8_t* data, size_t len, IorComponent& out,
                          std::string& error) {
  const char* transport = transport_of_tag(tag);
  if (!transport) {
    error = "tag " + std::to_string(tag) + " is not a clanorb transport's";
    return false;
  }
  CdrReader r(data, len);
  IorComponent c;
  r.read_string(c.boot_id, "boot id");
  r.read_string(c.address, "address");
  if (r.ok() && r.remaining() > 0) r.read_string(c.runtime_dir, "runtime directory");
  if (r.ok() && r.remaining() > 0) r.read_string(c.reach, "address for other hosts");
  if (!r.ok()) {
    error = r.error();
    return false;
  }
  const std::string scheme = std::string("giop:") + transport + ":";
  if (c.address.compare(0, scheme.size(), scheme) != 0) {
    error = "the address '" + c.address + "' is not a " + scheme + " address";
    return false;
  }
  out = std::move(c);
  return true;
}

}  // namespace clanorb
