#include "wire_bench/tcp_wire.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "wire_bench/sockets.hpp"

namespace wire_bench {
namespace {

class TcpLink : public Link {
 public:
  explicit TcpLink(int fd) : fd_(fd) {}
  ~TcpLink() override { close(fd_); }
  TcpLink(const TcpLink&) = delete;
  TcpLink& operator=(const TcpLink&) = delete;

  bool send(const void* p, size_t n) override {
    const auto* b = static_cast<const char*>(p);
    while (n > 0) {
      const ssize_t w = ::send(fd_, b, n, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      b += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  }

  bool recv(void* p, size_t n, Wait w) override {
    auto* b = static_cast<char*>(p);
    const int flags = w == Wait::kBusy ? MSG_DONTWAIT : MSG_WAITALL;
    while (n > 0) {
      const ssize_t r = ::recv(fd_, b, n, flags);
      if (r > 0) {
        b += r;
        n -= static_cast<size_t>(r);
      } else if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        return false;
      }
    }
    return true;
  }

 private:
  int fd_;
};

std::unique_ptr<Link> linked(int fd, std::string& error) {
  if (fd < 0) return nullptr;
  if (!set_nodelay(fd)) {
    error = std::string("TCP_NODELAY: ") + std::strerror(errno);
    close(fd);
    return nullptr;
  }
  return std::make_unique<TcpLink>(fd);
}

}  // namespace

std::unique_ptr<Link> accept_tcp(const std::string& bind_host, bench::Channel& ctl, std::string& error) {
  const int listener = listen_tcp({bind_host, "0"}, error);
  if (listener < 0) return nullptr;
  const uint32_t port = bound_port(listener);
  int fd = -1;
  if (!ctl.put(port)) error = "cannot send the tcp wire's port";
  else fd = accept_within(listener, 30, error);
  close(listener);
  return linked(fd, error);
}

std::unique_ptr<Link> connect_tcp(const std::string& server_host, bench::Channel& ctl, std::string& error) {
  uint32_t port = 0;
  if (!ctl.get(port, std::chrono::seconds(30))) {
    error = "no port for the tcp wire from the server";
    return nullptr;
  }
  return linked(connect_tcp_to({server_host, std::to_string(port)}, error), error);
}

}  // namespace wire_bench
