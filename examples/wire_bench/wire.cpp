#include "wire_bench/wire.hpp"

#include "wire_bench/tcp_wire.hpp"

namespace wire_bench {

const char* wait_name(Wait w) { return w == Wait::kBusy ? "busy poll" : "blocking"; }

const std::vector<WireKind>& wires() {
  static const std::vector<WireKind> all = {
      {"tcp", "tcp socket", accept_tcp, connect_tcp},
  };
  return all;
}

const WireKind* find_wire(const std::string& name) {
  for (const auto& w : wires()) {
    if (name == w.name) return &w;
  }
  return nullptr;
}

}  // namespace wire_bench
