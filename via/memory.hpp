// Protection tags, CLAN memory (VipClanAllocMem) and registrations
// (VipRegisterMem) (memory.cpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "clan_emul/region.hpp"
#include "via/vipl.h"

namespace via {

struct NicImpl;

struct Ptag {
  NicImpl* nic;
};

// Memory from VipClanAllocMem: an exported CLAN region.
struct MemRegion {
  clan::Region region;
  std::mutex mu;             // outstanding, and the cookie while it is reissued
  uint32_t outstanding = 0;  // posted receive descriptors using it
  // Descriptors in this block not yet handed back to the application, and
  // queued sends reading from it: VipClanFreeMem refuses the block until
  // none is left. Raised only under the NIC's lock, after checking that the
  // registrations used are still there (a block freed meanwhile is never
  // touched); lowered anywhere.
  std::atomic<uint32_t> in_use{0};
};

// Lets go of one hold on a block (see MemRegion::in_use); null: none taken.
inline void unhold(MemRegion* r) {
  if (r) r->in_use.fetch_sub(1, std::memory_order_release);
}

struct MemReg {
  uintptr_t addr;
  size_t len;
  Ptag* ptag;
  MemRegion* region;  // null: not writable by peers (sends and descriptors only)
  VIP_MEM_ATTRIBUTES attrs;
};

// Whether m covers [p, p+len).
bool covers(const MemReg& m, const void* p, size_t len);

}  // namespace via
