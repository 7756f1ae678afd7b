#include "fabric_bench/socket_io.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "bench/session.hpp"

namespace fabric_bench {

bool write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t r = ::read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

SocketPair::SocketPair(int type) {
  if (socketpair(AF_UNIX, type, 0, fd) != 0) bench::die("socketpair failed");
}

void SocketPair::keep(int end) {
  close(fd[1 - end]);
  fd[1 - end] = -1;
}

}  // namespace fabric_bench
