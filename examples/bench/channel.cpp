#include "bench/channel.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace bench {

Channel& Channel::operator=(Channel&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

void Channel::reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

bool Channel::make_pair(Channel& a, Channel& b, int type) {
  int fds[2];
  if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, fds) != 0) return false;
  a = Channel(fds[0]);
  b = Channel(fds[1]);
  return true;
}

bool Channel::put_bytes(const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = ::write(fd_, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool Channel::get_bytes(void* p, size_t n, std::chrono::milliseconds limit) {
  char* c = static_cast<char*>(p);
  const auto end = std::chrono::steady_clock::now() + limit;
  while (n > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{fd_, POLLIN, 0};
    int r = poll(&pfd, 1, static_cast<int>(left.count()));
    if (r <= 0) continue;  // EINTR or not yet: the deadline decides
    ssize_t got = ::read(fd_, c, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    c += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

}  // namespace bench
