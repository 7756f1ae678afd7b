#include "clan_emul/wire/udp_name.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

#include "clan_emul/error_detail.hpp"

namespace clan::wire {

int udp_name_family(const std::byte* name, size_t len) {
  if (name == nullptr || len < sizeof(sa_family_t)) return -1;
  sa_family_t family;
  std::memcpy(&family, name, sizeof family);
  if (family == AF_INET && len == sizeof(sockaddr_in)) return AF_INET;
  if (family == AF_INET6 && len == sizeof(sockaddr_in6)) return AF_INET6;
  return -1;
}

Errc check_udp_name(const std::byte* name, size_t len, int our_family) {
  const int family = udp_name_family(name, len);
  if (family < 0) {
    return set_error(Errc::kCorrupt, 0,
                     "udp peer name of %zu bytes is neither a sockaddr_in nor a sockaddr_in6",
                     len);
  }
  if (family != our_family) {
    return set_error(Errc::kCorrupt, 0, "udp peer %s is not of our address family",
                     udp_name_text(name, len).c_str());
  }
  bool unspecified;
  in_port_t port;
  if (family == AF_INET) {
    sockaddr_in a;
    std::memcpy(&a, name, sizeof a);
    port = a.sin_port;
    unspecified = a.sin_addr.s_addr == htonl(INADDR_ANY);
  } else {
    sockaddr_in6 a;
    std::memcpy(&a, name, sizeof a);
    port = a.sin6_port;
    unspecified = IN6_IS_ADDR_UNSPECIFIED(&a.sin6_addr);
  }
  if (port == 0 || unspecified) {
    return set_error(Errc::kCorrupt, 0, "udp peer %s: %s", udp_name_text(name, len).c_str(),
                     port == 0 ? "port 0" : "the unspecified address");
  }
  return Errc::kOk;
}

std::string udp_name_text(const std::byte* name, size_t len) {
  char host[INET6_ADDRSTRLEN] = "?";
  const int family = udp_name_family(name, len);
  if (family == AF_INET) {
    sockaddr_in a;
    std::memcpy(&a, name, sizeof a);
    inet_ntop(AF_INET, &a.sin_addr, host, sizeof host);
    return std::string(host) + ":" + std::to_string(ntohs(a.sin_port));
  }
  if (family == AF_INET6) {
    sockaddr_in6 a;
    std::memcpy(&a, name, sizeof a);
    inet_ntop(AF_INET6, &a.sin6_addr, host, sizeof host);
    return "[" + std::string(host) + "]:" + std::to_string(ntohs(a.sin6_port));
  }
  return host;
}

}  // namespace clan::wire
