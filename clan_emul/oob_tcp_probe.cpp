#include "clan_emul/oob_tcp_probe.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace clan::oob_detail {

namespace {

// A sockaddr for a numeric host (IPv6 bracketed); false if it is none.
bool make_sockaddr(const std::string& host, uint16_t port, sockaddr_storage& ss, socklen_t& len) {
  std::memset(&ss, 0, sizeof ss);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(port);
    len = sizeof *a;
    return ::inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &a->sin6_addr) == 1;
  }
  auto* a = reinterpret_cast<sockaddr_in*>(&ss);
  a->sin_family = AF_INET;
  a->sin_port = htons(port);
  len = sizeof *a;
  return ::inet_pton(AF_INET, host.c_str(), &a->sin_addr) == 1;
}

TcpProbe::Outcome from_errno(int err) {
  if (err == 0) return TcpProbe::Outcome::kListening;
  return err == ECONNREFUSED ? TcpProbe::Outcome::kRefused : TcpProbe::Outcome::kNoAnswer;
}

}  // namespace

TcpProbe::TcpProbe(const std::string& host, uint16_t port, Clock::time_point deadline) : deadline_(deadline) {
  sockaddr_storage ss;
  socklen_t len = 0;
  if (!make_sockaddr(host, port, ss, len)) {
    outcome_ = Outcome::kNoAnswer;
    return;
  }
  fd_ = ::socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    outcome_ = Outcome::kNoAnswer;
    return;
  }
  // Closed with a reset: nothing lingers in TIME_WAIT, the listener sees a
  // connection that ends at once.
  linger l{1, 0};
  ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&ss), len) == 0) {
    finish(Outcome::kListening);
  } else if (errno != EINPROGRESS) {
    finish(from_errno(errno));
  }
}

TcpProbe::~TcpProbe() {
  if (fd_ >= 0) ::close(fd_);
}

void TcpProbe::finish(Outcome o) {
  outcome_ = o;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

TcpProbe::Outcome TcpProbe::check(Clock::time_point now) {
  if (outcome_ != Outcome::kPending) return outcome_;
  pollfd p{fd_, POLLOUT, 0};
  if (::poll(&p, 1, 0) > 0) {
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    finish(from_errno(err));
  } else if (now >= deadline_) {
    finish(Outcome::kNoAnswer);
  }
  return outcome_;
}

}  // namespace clan::oob_detail
