// Two NICs with wires on 127.0.0.1 (or test_host()), the writer linked to the owner: the
// owner's cookies import on the writer as apertures over the wire, as if
// the owner were on another host. (The two-host tests run the same over a
// veth pair between network namespaces.)
#pragma once

#include <chrono>
#include <memory>

#include "clan_emul/aperture.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/region.hpp"
#include "tests/clan_emul/peer_host.hpp"

namespace clan::test {

inline NicConfig wire_nic_config(const char* name) {
  NicConfig c;
  c.name = name;
  c.wire.listen = test_host() + ":0";
  return c;
}

struct WirePair {
  std::unique_ptr<Nic> owner, writer;
  Region region;
  explicit WirePair(size_t bytes = 4096) {
    owner = std::move(Nic::open(wire_nic_config("owner")).value());
    writer = std::move(Nic::open(wire_nic_config("writer")).value());
    region = std::move(owner->export_region(bytes).value());
  }
  Errc link() {
    return writer->connect_wire(owner->id(), owner->wire_address(), Deadline::after(std::chrono::seconds(10)));
  }
  uint64_t word(size_t off) const {
    return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(region.data() + off)).load();
  }
};

}  // namespace clan::test
