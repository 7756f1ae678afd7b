#include "orb_transports/common/node_address.hpp"

#include <cstdlib>

namespace clanorb {

bool parse_node_address(const char* param, std::string& node, uint16_t& port, bool allow_empty) {
  if (!param) return false;
  const std::string s = param;
  const size_t colon = s.rfind(':');
  if (colon == std::string::npos) return false;
  node = s.substr(0, colon);
  const std::string p = s.substr(colon + 1);
  for (char ch : node) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                    ch == '.' || ch == '_' || ch == '-';
    if (!ok) return false;
  }
  if (node.size() > 64 || (node.empty() && !allow_empty)) return false;
  if (p.empty()) {
    port = 0;
    return allow_empty;
  }
  if (p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) return false;
  const unsigned long v = std::strtoul(p.c_str(), nullptr, 10);
  if (v > 65535 || (v == 0 && !allow_empty)) return false;
  port = static_cast<uint16_t>(v);
  return true;
}

NodeAddress::NodeAddress(const char* scheme, std::string node, uint16_t port)
    : scheme_(scheme),
      node_(std::move(node)),
      port_(port),
      address_(std::string(scheme) + ":" + node_ + ":" + std::to_string(port)) {}

}  // namespace clanorb
