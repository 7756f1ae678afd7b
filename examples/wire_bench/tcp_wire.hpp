// The bare TCP socket wire: one connection with TCP_NODELAY. A busy receiver
// spins on recv(MSG_DONTWAIT); a blocking one sleeps in recv(MSG_WAITALL).
// The reference every other wire is compared with over the same link.
#pragma once

#include <memory>
#include <string>

#include "bench/channel.hpp"
#include "wire_bench/wire.hpp"

namespace wire_bench {

// Listens on bind_host (any port), tells the port through `ctl` and accepts
// one connection within 30 s.
std::unique_ptr<Link> accept_tcp(const std::string& bind_host, bench::Channel& ctl, std::string& error);
// Reads the port from `ctl` and connects to server_host.
std::unique_ptr<Link> connect_tcp(const std::string& server_host, bench::Channel& ctl, std::string& error);

}  // namespace wire_bench
