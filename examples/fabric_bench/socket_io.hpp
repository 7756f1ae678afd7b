// Whole-buffer reads and writes on the Unix-domain socketpairs the fabric
// benchmarks compare against.
#pragma once

#include <cstddef>

namespace fabric_bench {

// False on an error or end of file; EINTR is retried.
bool write_all(int fd, const void* p, size_t n);
bool read_all(int fd, void* p, size_t n);

// A socketpair of `type`; dies if it cannot be made.
struct SocketPair {
  explicit SocketPair(int type);
  int fd[2] = {-1, -1};  // [0] the measuring side's end, [1] the peer's
  // Each process closes the end it does not use after the fork.
  void keep(int end);
};

}  // namespace fabric_bench
