#include "tools/clanorb-ior/ior_text.hpp"

#include <cctype>
#include <strings.h>

namespace clanorb::ior_tool {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string trimmed(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

}  // namespace

bool ior_octets(const std::string& text, std::vector<uint8_t>& out, std::string& error) {
  const std::string s = trimmed(text);
  if (s.size() < 4 || strncasecmp(s.c_str(), "IOR:", 4) != 0) {
    error = "not a stringified IOR: it does not start with \"IOR:\"";
    return false;
  }
  const std::string hex = s.substr(4);
  if (hex.empty()) {
    error = "the IOR has no hex digits after \"IOR:\"";
    return false;
  }
  if (hex.size() % 2 != 0) {
    error = "the IOR has an odd number of hex digits (" + std::to_string(hex.size()) + ")";
    return false;
  }
  out.clear();
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = hex_value(hex[i]), lo = hex_value(hex[i + 1]);
    if (hi < 0 || lo < 0) {
      const size_t at = hi < 0 ? i : i + 1;
      error = std::string("the IOR has a character that is not a hex digit, '") + hex[at] +
              "', at position " + std::to_string(4 + at) + " (counting \"IOR:\" from 0)";
      return false;
    }
    out.push_back(static_cast<uint8_t>(hi << 4 | lo));
  }
  return true;
}

}  // namespace clanorb::ior_tool
