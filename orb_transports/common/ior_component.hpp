// The IOR tagged component each clanorb transport publishes, written and read
// only here (by the plugins and by the clanorb-ior tool).
//
// Tag: one per transport, outside omniORB's 0x414154xx range ("CLA0".."CLA2").
// Data: a CDR encapsulation of three strings:
//   boot id      this host's /proc/sys/kernel/random/boot_id: shared memory
//                reaches only processes of the same boot of the same host;
//   address      the endpoint, "giop:<transport>:<node>:<port>";
//   runtime dir  the server's clan_emul runtime directory: its nodes are
//                found only by processes using the same directory;
//   reach        (optional) "HOST:PORT" where the server's node listens for
//                nodes of other hosts (-ORBclanHost): a client of another
//                host connects to NODE@HOST:PORT and writes over the wire.
// Components holding only the first two strings are accepted (the runtime
// directory is then not checked): clanorb servers have published that form.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace clanorb {

inline constexpr uint32_t kClanIorTag = 0x434c4130;  // "CLA0"
inline constexpr uint32_t kOtpIorTag = 0x434c4131;   // "CLA1"
inline constexpr uint32_t kViaIorTag = 0x434c4132;   // "CLA2"

// "clan", "otp" or "via"; null for a tag that is not clanorb's.
const char* transport_of_tag(uint32_t tag);
// Whether the transport of `tag` (or of `scheme`, "giop:clan") reaches nodes
// of other hosts: its components publish a reach, its addresses take
// NAME@HOST:PORT nodes, and its endpoints accept nodes of other hosts.
bool tag_crosses_hosts(uint32_t tag);
bool scheme_crosses_hosts(const std::string& scheme);

struct IorComponent {
  std::string boot_id;
  std::string address;
  std::string runtime_dir;  // empty if the component did not carry one
  std::string reach;        // empty: the server serves its own host only
};

std::vector<uint8_t> encode_ior_component(const IorComponent& c);

// Decodes `data` (the component's octets) into `out`. False, with `error`
// saying what is wrong, if the data is not such a component, or if its
// address is not of the transport `tag` names.
bool decode_ior_component(uint32_t tag, const uint8_t* data, size_t len, IorComponent& out,
                          std::string& error);

}  // namespace clanorb
