#include "wire_bench/sockets.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace wire_bench {
namespace {

std::string where(const HostPort& hp) { return hp.host + ":" + hp.port; }

// The addresses of host:port (numeric port), or null with the reason.
addrinfo* resolve(const HostPort& hp, bool passive, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  addrinfo* res = nullptr;
  const int rc = getaddrinfo(hp.host.c_str(), hp.port.c_str(), &hints, &res);
  if (rc != 0) {
    error = "cannot resolve " + where(hp) + ": " + gai_strerror(rc);
    return nullptr;
  }
  return res;
}

}  // namespace

bool parse_host_port(const std::string& s, HostPort& out) {
  const auto colon = s.rfind(':');
  out.host = colon == std::string::npos ? s : s.substr(0, colon);
  out.port = colon == std::string::npos ? "0" : s.substr(colon + 1);
  return !out.host.empty() && !out.port.empty() && out.port.find_first_not_of("0123456789") == std::string::npos;
}

int listen_tcp(const HostPort& at, std::string& error) {
  addrinfo* res = resolve(at, true, error);
  if (!res) return -1;
  int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 4) != 0) {
    error = "cannot listen on " + where(at) + ": " + std::strerror(errno);
    if (fd >= 0) close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  return fd;
}

unsigned bound_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return 0;
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return 0;
}

int accept_within(int listener, int seconds, std::string& error) {
  pollfd p{listener, POLLIN, 0};
  int rc;
  do rc = poll(&p, 1, seconds * 1000);
  while (rc < 0 && errno == EINTR);
  if (rc <= 0) {
    error = rc == 0 ? "no connection within " + std::to_string(seconds) + " s" : std::strerror(errno);
    return -1;
  }
  const int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) error = std::string("accept: ") + std::strerror(errno);
  return fd;
}

int connect_tcp_to(const HostPort& to, std::string& error) {
  addrinfo* res = resolve(to, false, error);
  if (!res) return -1;
  int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
    error = "cannot connect to " + where(to) + ": " + std::strerror(errno);
    if (fd >= 0) close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  return fd;
}

bool set_nodelay(int fd) {
  const int one = 1;
  return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0;
}

}  // namespace wire_bench
