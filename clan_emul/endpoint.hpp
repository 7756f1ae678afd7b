// An endpoint (paper 004 sect. 3): the NIC resources of one locus of
// communication, bound to one of the NIC's frames while it is resident and
// kept in host memory otherwise. Regions exported with an endpoint accept
// writes only while it is resident: a writer that finds it on the host asks
// the NIC's re-mapping thread for residency and is held until it is granted
// (nothing is dropped). Apertures imported with an endpoint belong to it:
// a write through one while the endpoint is on the host goes on, and asks
// for residency in the background (the on-host read-write state of Fig. 2).
//
// Thread safety: as Nic. An endpoint must outlive the regions and apertures
// created with it; release those first.
#pragma once

#include <cstdint>

#include "clan_emul/nic_layout.hpp"

namespace clan {

class Nic;

// Which resident endpoint gives up its frame when another needs one.
enum class Replacement : uint32_t {
  kRandom,  // any resident endpoint, uniformly (paper 004 sect. 4.2)
  kLru,     // the one least recently used, as sampled from writers' marks
};
const char* to_string(Replacement r);

class Endpoint {
 public:
  Endpoint() = default;
  Endpoint(Endpoint&& o) noexcept;
  Endpoint& operator=(Endpoint&& o) noexcept;
  ~Endpoint() { reset(); }

  uint32_t index() const { return index_; }
  bool valid() const { return nic_ != nullptr; }
  Residency residency() const;
  // Releases it: its regions' held writers get their writes returned
  // (kStaleCookie once the regions go), and its frame is free.
  void reset();

 private:
  friend class Nic;
  Nic* nic_ = nullptr;
  uint32_t index_ = 0;
};

}  // namespace clan
