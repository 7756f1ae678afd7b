// IORs made or edited by tests: one written from parts with clanorb's CDR
// writer, and a real one whose clanorb components are given another boot id.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "orb_transports/common/cdr_reader.hpp"
#include "orb_transports/common/fabric.hpp"

namespace clanorb::test {

struct ForgedComponent {
  uint32_t tag;
  std::vector<uint8_t> data;
};

inline std::string to_hex(const std::vector<uint8_t>& octets) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (uint8_t o : octets) {
    s += digits[o >> 4];
    s += digits[o & 15];
  }
  return s;
}

inline std::string to_hex(const std::string& s) { return to_hex(std::vector<uint8_t>(s.begin(), s.end())); }

// "IOR:..." of type IDL:echo:1.0 with one IIOP 1.2 profile.
inline std::string forged_ior(const std::string& host, uint16_t port,
                              const std::vector<ForgedComponent>& components) {
  CdrWriter body;
  body.write_octet(1);
  body.write_octet(2);
  body.write_string(host);
  body.write_ushort(port);
  body.write_octets({'k', 'e', 'y'});
  body.write_ulong(static_cast<uint32_t>(components.size()));
  for (const ForgedComponent& c : components) {
    body.write_ulong(c.tag);
    body.write_octets(c.data);
  }
  CdrWriter ior;
  ior.write_string("IDL:echo:1.0");
  ior.write_ulong(1);
  ior.write_ulong(0);  // TAG_INTERNET_IOP
  ior.write_octets(body.bytes());
  return "IOR:" + to_hex(ior.bytes());
}

// `ior` with this host's boot id replaced by `other` (of the same length, so
// every length in the IOR stays right). Empty if the boot id is not in it.
inline std::string with_boot_id(std::string ior, const std::string& other) {
  const std::string from = to_hex(boot_id()), to = to_hex(other);
  if (from.size() != to.size() || ior.find(from) == std::string::npos) return "";
  for (size_t at = ior.find(from); at != std::string::npos; at = ior.find(from, at + to.size()))
    ior.replace(at, from.size(), to);
  return ior;
}

// A boot id of the same form as this host's, but not this host's.
inline std::string another_boot_id() {
  std::string other = boot_id();
  for (char& c : other)
    if (c != '-') c = c == '0' ? '1' : '0';
  return other;
}

}  // namespace clanorb::test
