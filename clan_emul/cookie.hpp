// An RDMA cookie: the capability to write one exported region. Whoever holds
// it may write the region through an aperture; it is checked against the
// exporter's region table on import and (by generation) on every write.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace clan {

struct RdmaCookie {
  uint64_t nic_id;      // exporter NIC's random id (guards against pid reuse)
  int32_t pid;          // exporter process: locates its control segment
  int32_t nic_fd;       // exporter's control-segment memfd (a locator, not a secret)
  uint32_t region;      // slot index in the exporter's region table
  uint32_t generation;  // slot generation when issued; revocation and reuse change it
  uint64_t length;      // bytes the holder may write
  uint64_t secret[2];   // 128 random bits: the capability itself

  friend bool operator==(const RdmaCookie& a, const RdmaCookie& b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
  }
};
static_assert(std::is_trivially_copyable_v<RdmaCookie> && sizeof(RdmaCookie) == 48);

}  // namespace clan
