// The wires the cross-host benchmark (bench_wire) measures, behind one
// interface: a wire joins as a class of its own and a line of wires().
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/channel.hpp"

namespace wire_bench {

// How a receiver waits for its bytes: spinning on a call that never sleeps,
// or sleeping in the kernel until they come.
enum class Wait : uint32_t { kBusy = 0, kBlocking = 1 };
const char* wait_name(Wait w);

// One connected end of a wire.
class Link {
 public:
  virtual ~Link() = default;
  // All n bytes sent; false on an error (the peer gone).
  virtual bool send(const void* p, size_t n) = 0;
  // Exactly n bytes received, waiting as `w` says; false on an error or
  // end of stream.
  virtual bool recv(void* p, size_t n, Wait w) = 0;
};

// A wire's two ways of making a link. Each uses the control channel for its
// own rendezvous (a port, an address, a key); on failure it returns null and
// says why in `error`.
struct WireKind {
  const char* name;   // on the command line and in CSV files: "tcp"
  const char* label;  // in tables: "tcp socket"
  std::unique_ptr<Link> (*accept)(const std::string& bind_host, bench::Channel& ctl, std::string& error);
  std::unique_ptr<Link> (*connect)(const std::string& server_host, bench::Channel& ctl, std::string& error);
};

// Every wire, in table order.
const std::vector<WireKind>& wires();
// The wire called `name`, or null.
const WireKind* find_wire(const std::string& name);

}  // namespace wire_bench
