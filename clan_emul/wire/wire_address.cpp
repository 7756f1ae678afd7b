#include "clan_emul/wire/wire_address.hpp"

#include "clan_emul/decimal.hpp"
#include "clan_emul/error_detail.hpp"

namespace clan::wire {
namespace {

bool host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

}  // namespace

Result<WireAddress> parse_wire_address(const std::string& text) {
  WireAddress a;
  const size_t colon = text.rfind(':');
  a.host = text.substr(0, colon);
  if (a.host.empty() || a.host.size() > 253) {
    return set_error(Errc::kInvalidArgument, 0, "wire address '%s': no host, or a host of more than 253 characters",
                     text.c_str());
  }
  for (char c : a.host) {
    if (!host_char(c)) {
      return set_error(Errc::kInvalidArgument, 0,
                       "wire address '%s': '%c' in the host (an IPv4 address or host name, then ':port')",
                       text.c_str(), c);
    }
  }
  if (colon == std::string::npos) return a;
  const ParsedValue port = parse_decimal(std::string_view(text).substr(colon + 1));
  if (port.problem != ValueProblem::kNone || port.value > 65535) {
    return set_error(Errc::kInvalidArgument, 0, "wire address '%s': the port is not a decimal 0-65535",
                     text.c_str());
  }
  a.port = static_cast<uint16_t>(port.value);
  return a;
}

}  // namespace clan::wire
