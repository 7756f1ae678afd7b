#include "fabric_bench/socket_io.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "bench/session.hpp"

namespace fabric_bench {

// A blocking stream socket sends all of a buffer in one call, and
// MSG_WAITALL receives all of it, unless a signal interrupts them first.
bool write_all(int fd, const void* p, size_t n) {
  ssize_t w;
  do w = ::send(fd, p, n, 0);
  while (w < 0 && errno == EINTR);
  return w == static_cast<ssize_t>(n);
}

bool read_all(int fd, void* p, size_t n) {
  ssize_t r;
  do r = ::recv(fd, p, n, MSG_WAITALL);
  while (r < 0 && errno == EINTR);
  return r == static_cast<ssize_t>(n);
}

SocketPair::SocketPair(int type) {
  if (socketpair(AF_UNIX, type, 0, fd) != 0) bench::die("socketpair failed");
}

void SocketPair::keep(int end) {
  close(fd[1 - end]);
  fd[1 - end] = -1;
}

}  // namespace fabric_bench
