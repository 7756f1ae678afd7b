// The TCP sockets bench_wire uses for its control channel and its tcp wire:
// "HOST[:PORT]" parsed, a listener, a bounded accept and a connect.
#pragma once

#include <string>

namespace wire_bench {

struct HostPort {
  std::string host;
  std::string port = "0";
};
// "HOST[:PORT]"; false if it is empty or the port is not a number.
bool parse_host_port(const std::string& s, HostPort& out);

// A listening TCP socket on host:port, or -1 with the reason in `error`.
int listen_tcp(const HostPort& at, std::string& error);
// The port a socket is bound to, or 0.
unsigned bound_port(int fd);
// One connection accepted within `seconds`, or -1 with the reason in `error`.
int accept_within(int listener, int seconds, std::string& error);
// A connected TCP socket, or -1 with the reason in `error`.
int connect_tcp_to(const HostPort& to, std::string& error);
// TCP_NODELAY: every message leaves at once.
bool set_nodelay(int fd);

}  // namespace wire_bench
