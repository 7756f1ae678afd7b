// The control channel between a benchmark's two processes: one end per
// process, plain structs, bounded reads.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <type_traits>

namespace bench {

class Channel {
 public:
  Channel() = default;
  explicit Channel(int fd) : fd_(fd) {}
  Channel(Channel&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Channel& operator=(Channel&& o) noexcept;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ~Channel() { reset(); }
  void reset();
  int fd() const { return fd_; }

  // A connected pair (SOCK_STREAM); one end for each process.
  static bool make_pair(Channel& a, Channel& b, int type = SOCK_STREAM);

  bool put_bytes(const void* p, size_t n);
  // Reads exactly n bytes, or fails on EOF, error or when `limit` passes.
  bool get_bytes(void* p, size_t n, std::chrono::milliseconds limit);

  template <class T>
  bool put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    return put_bytes(&v, sizeof v);
  }
  template <class T>
  bool get(T& v, std::chrono::milliseconds limit) {
    static_assert(std::is_trivially_copyable_v<T>);
    return get_bytes(&v, sizeof v, limit);
  }

 private:
  int fd_ = -1;
};

}  // namespace bench
