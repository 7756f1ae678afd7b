// An exported region: memory of this process that peers holding its RDMA
// cookie may write. Revocation is immediate for every write that starts after
// revoke() returns (a write already past its check may still land, as a
// packet already on the wire would on a real NIC).
#pragma once

#include <cstddef>
#include <cstdint>

#include "clan_emul/cookie.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/shared_memory.hpp"

namespace clan {

class Nic;

class Region {
 public:
  Region() = default;
  Region(Region&& o) noexcept;
  Region& operator=(Region&& o) noexcept;
  ~Region() { reset(); }

  std::byte* data() const { return memory_.data(); }
  size_t size() const { return memory_.size(); }
  uint32_t index() const { return index_; }
  bool valid() const { return nic_ != nullptr; }

  // The capability peers need to write this region.
  RdmaCookie cookie() const { return cookie_; }
  // Every cookie issued so far stops working.
  void revoke();
  // Revokes and issues a fresh cookie (new generation and secret).
  RdmaCookie reissue();
  // Frees the region: its cookie becomes stale.
  void reset();

 private:
  friend class Nic;
  Nic* nic_ = nullptr;
  uint32_t index_ = 0;
  SharedMemory memory_;
  RdmaCookie cookie_{};
};

}  // namespace clan
