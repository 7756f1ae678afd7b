#include "clan_emul/oob_address.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <string>

#include "clan_emul/decimal.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/oob_wire.hpp"

namespace clan::oob_detail {

namespace {

struct HostPort {
  std::string host;       // as written, brackets removed
  bool bracketed = false;  // [IPv6]
  std::string port;       // digits as written; empty when left out
  bool has_port = false;
};

// Splits "HOST[:PORT]" or "[IPv6][:PORT]"; a bare IPv6 (two colons or more) is refused.
Errc split_host_port(std::string_view text, const std::string& whole, HostPort& out) {
  std::string_view rest;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string_view::npos) {
      return set_error(Errc::kInvalidArgument, 0, "'%s': an IPv6 address lacks its closing ']'", whole.c_str());
    }
    out.host = std::string(text.substr(1, close - 1));
    out.bracketed = true;
    rest = text.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') {
      return set_error(Errc::kInvalidArgument, 0, "'%s': only ':PORT' may follow ']'", whole.c_str());
    }
  } else {
    auto colon = text.find(':');
    if (colon != std::string_view::npos && text.find(':', colon + 1) != std::string_view::npos) {
      return set_error(Errc::kInvalidArgument, 0, "'%s': an IPv6 address goes in brackets, as [::1]:7460",
                       whole.c_str());
    }
    out.host = std::string(text.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view{} : text.substr(colon);
  }
  if (!rest.empty()) {
    out.has_port = true;
    out.port = std::string(rest.substr(1));
  }
  return Errc::kOk;
}

Errc parse_port(const HostPort& hp, const std::string& whole, bool zero_ok, uint16_t& port) {
  if (!hp.has_port) {
    port = kDefaultOobPort;
    return Errc::kOk;
  }
  const ParsedValue v = parse_decimal(hp.port);
  const uint64_t least = zero_ok ? 0 : 1;
  if (v.problem != ValueProblem::kNone || v.value < least || v.value > 65535) {
    return set_error(Errc::kInvalidArgument, 0, "'%s': the port '%s' %s; it takes %llu to 65535", whole.c_str(),
                     hp.port.c_str(), v.problem != ValueProblem::kNone ? describe(v.problem) : "is out of range",
                     static_cast<unsigned long long>(least));
  }
  port = static_cast<uint16_t>(v.value);
  return Errc::kOk;
}

bool all_digits_and_dots(const std::string& s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || c == '.')) return false;
  }
  return true;
}

// RFC 1123 labels: letters, digits and '-', 1 to 63, not starting or ending with '-'.
bool valid_dns_name(const std::string& s) {
  if (s.empty() || s.size() > kMaxHostName) return false;
  std::size_t label = 0;
  char prev = '.';
  for (char c : s) {
    if (c == '.') {
      if (label == 0 || prev == '-') return false;
      label = 0;
    } else {
      bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
      if (!ok || (label == 0 && c == '-') || ++label > 63) return false;
    }
    prev = c;
  }
  return prev != '-';
}

// A numeric form from a sockaddr: dotted IPv4 or bracketed IPv6.
std::string numeric(const sockaddr* sa) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (sa->sa_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, buf, sizeof buf);
    return buf;
  }
  ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, buf, sizeof buf);
  return std::string("[") + buf + "]";
}

Errc resolve_dns(const std::string& name, const std::string& whole, std::string& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &res);
  if (rc != 0 || !res) {
    const bool unknown = rc == EAI_NONAME || rc == EAI_NODATA || rc == EAI_FAIL;
    return set_error(unknown ? Errc::kInvalidArgument : Errc::kSystem, 0, "'%s': cannot resolve the host '%s': %s",
                     whole.c_str(), name.c_str(), rc != 0 ? ::gai_strerror(rc) : "no address");
  }
  out = numeric(res->ai_addr);
  ::freeaddrinfo(res);
  return Errc::kOk;
}

// The host of `hp` as a numeric address: IPv4 and IPv6 literals checked,
// DNS names checked and resolved.
Errc resolve_host(const HostPort& hp, const std::string& whole, std::string& out) {
  if (hp.bracketed) {
    in6_addr a{};
    if (::inet_pton(AF_INET6, hp.host.c_str(), &a) != 1) {
      return set_error(Errc::kInvalidArgument, 0, "'%s': '%s' is not an IPv6 address", whole.c_str(),
                       hp.host.c_str());
    }
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_addr = a;
    out = numeric(reinterpret_cast<const sockaddr*>(&sa));
    return Errc::kOk;
  }
  if (hp.host.empty()) return set_error(Errc::kInvalidArgument, 0, "'%s': the host is missing", whole.c_str());
  if (all_digits_and_dots(hp.host)) {
    in_addr a{};
    if (::inet_pton(AF_INET, hp.host.c_str(), &a) != 1) {
      return set_error(Errc::kInvalidArgument, 0, "'%s': '%s' is not a dotted IPv4 address", whole.c_str(),
                       hp.host.c_str());
    }
    out = hp.host;
    return Errc::kOk;
  }
  if (!valid_dns_name(hp.host)) {
    return set_error(Errc::kInvalidArgument, 0,
                     "'%s': '%s' is not a host (a dotted IPv4, a bracketed IPv6, or a DNS name of at most "
                     "%zu characters, labels of letters, digits and '-')",
                     whole.c_str(), hp.host.c_str(), kMaxHostName);
  }
  return resolve_dns(hp.host, whole, out);
}

}  // namespace

Errc parse_peer_address(std::string_view text, PeerAddress& out) {
  const std::string whole(text);
  const auto at = text.find('@');
  out = PeerAddress{};
  out.name = std::string(text.substr(0, at));
  if (!oob_wire::valid_node_name(out.name)) {
    return set_error(Errc::kInvalidArgument, 0,
                     "'%s' is not a node address: the name '%s' is not 1 to %zu characters of A-Z a-z 0-9 . _ - "
                     "(not '.' or '..'); a node of another host is NAME@HOST[:PORT]",
                     whole.c_str(), out.name.c_str(), oob_wire::kMaxNodeName);
  }
  if (at == std::string_view::npos) return Errc::kOk;
  HostPort hp;
  if (Errc e = split_host_port(text.substr(at + 1), whole, hp); e != Errc::kOk) return e;
  if (Errc e = parse_port(hp, whole, false, out.port); e != Errc::kOk) return e;
  return resolve_host(hp, whole, out.host);
}

Errc parse_listen_address(std::string_view text, std::string& host, uint16_t& port) {
  const std::string whole(text);
  HostPort hp;
  if (Errc e = split_host_port(text, whole, hp); e != Errc::kOk) return e;
  if (Errc e = parse_port(hp, whole, true, port); e != Errc::kOk) return e;
  if (!hp.bracketed && hp.host == "*") {
    host.assign(1, '*');  // assign(): GCC 12 warns falsely (-Wrestrict) on = "*"
    return Errc::kOk;
  }
  return resolve_host(hp, whole, host);
}

std::string canonical_ip(std::string_view ip) {
  const std::string s(ip);
  in_addr a4{};
  if (::inet_pton(AF_INET, s.c_str(), &a4) == 1) return s;
  in6_addr a6{};
  if (::inet_pton(AF_INET6, s.c_str(), &a6) != 1) return {};
  if (IN6_IS_ADDR_V4MAPPED(&a6)) {
    char buf[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &a6.s6_addr[12], buf, sizeof buf);
    return buf;
  }
  sockaddr_in6 sa{};
  sa.sin6_family = AF_INET6;
  sa.sin6_addr = a6;
  return numeric(reinterpret_cast<const sockaddr*>(&sa));
}

}  // namespace clan::oob_detail
