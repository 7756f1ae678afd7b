// The structure of an IOR (CORBA 3.0, 13.6.2 and 15.7.2), read with every
// length checked: its type id and profiles; of an IIOP profile its version,
// host, port and tagged components; of a TAG_MULTIPLE_COMPONENTS profile its
// components. Other profiles are kept as a tag and a length.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace clanorb::ior_tool {

inline constexpr uint32_t kTagInternetIop = 0;
inline constexpr uint32_t kTagMultipleComponents = 1;

struct TaggedComponent {
  uint32_t tag = 0;
  std::vector<uint8_t> data;
};

struct Profile {
  uint32_t tag = 0;
  size_t length = 0;                 // octets of the profile's data
  uint8_t major = 0, minor = 0;      // IIOP only
  std::string host;                  // IIOP only
  uint16_t port = 0;                 // IIOP only
  std::vector<uint8_t> object_key;   // IIOP only
  std::vector<TaggedComponent> components;  // IIOP 1.1+ and multiple-components
};

struct Ior {
  std::string type_id;
  std::vector<Profile> profiles;
};

// False, with `error` saying where and what, if `octets` are not an IOR.
bool decode_ior(const std::vector<uint8_t>& octets, Ior& out, std::string& error);

}  // namespace clanorb::ior_tool
