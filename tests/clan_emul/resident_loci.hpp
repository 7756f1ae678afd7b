// Endpoints of an owner NIC, each with one 4 KiB region, and a writer NIC's
// apertures onto them: the resident-set and held-DMA tests' setting.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "clan_emul/aperture.hpp"
#include "clan_emul/endpoint.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/region.hpp"

namespace clan::test {

// One endpoint of the owner with one region, and the writer's aperture onto it.
struct Locus {
  Endpoint endpoint;
  Region region;
  Aperture ap;
};

inline std::vector<Locus> loci(Nic& owner, Nic& writer, size_t n) {
  std::vector<Locus> v(n);
  for (Locus& l : v) {
    l.endpoint = std::move(owner.create_endpoint().value());
    l.region = std::move(owner.export_region(4096, &l.endpoint).value());
    l.ap = std::move(writer.import(l.region.cookie()).value());
  }
  return v;
}

inline uint64_t word(const Region& r, size_t off) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(r.data() + off)).load();
}

}  // namespace clan::test
