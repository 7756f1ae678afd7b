// Two NICs in one process: an owner exporting one 4 KiB region and a writer
// holding an aperture onto it, for tests of what a network write does.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "clan_emul/aperture.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/region.hpp"

namespace clan::test {

struct NicPair {
  std::unique_ptr<Nic> owner, writer;
  Region region;
  Aperture ap;
  explicit NicPair(NicConfig c = {}) {
    owner = std::move(Nic::open(c).value());
    writer = std::move(Nic::open(c).value());
    region = std::move(owner->export_region(4096).value());
    ap = std::move(writer->import(region.cookie()).value());
  }
  uint64_t word(size_t off) const {
    return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(region.data() + off)).load();
  }
};

}  // namespace clan::test
