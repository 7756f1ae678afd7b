// Memory: CLAN memory a peer may write (VipClanAllocMem), registrations
// (VipRegisterMem) and the receive regions posted descriptors hold, whose
// cookie is reissued when the last of them completes (sect. 3.8).
#include "via/handles.hpp"
#include "via/nic_impl.hpp"

namespace via {

bool covers(const MemReg& m, const void* p, size_t len) {
  auto a = reinterpret_cast<uintptr_t>(p);
  return a >= m.addr && len <= m.len && a - m.addr <= m.len - len;
}

const MemReg* NicImpl::find_mem(VIP_MEM_HANDLE h, const void* p, size_t len) const {
  auto it = mems.find(h);
  if (it == mems.end() || !covers(it->second, p, len)) return nullptr;
  return &it->second;
}

void NicImpl::release(MemRegion* r) {
  std::lock_guard lock(r->mu);
  if (r->outstanding > 0 && --r->outstanding == 0 &&
      revoke_on_completion.load(std::memory_order_relaxed)) {
    r->region.reissue();  // sect. 3.8: the old cookie stops working now
    revocations.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace via

using namespace via;

extern "C" {

VIP_RETURN VipClanAllocMem(VIP_NIC_HANDLE NicHandle, VIP_ULONG Length, VIP_PVOID* VirtualAddress) {
  NicImpl* n = nic_of(NicHandle);
  if (!n || !VirtualAddress || Length == 0) return VIP_INVALID_PARAMETER;
  auto r = n->nic->export_region(Length);
  if (!r) return r.error() == clan::Errc::kInvalidArgument ? VIP_INVALID_PARAMETER
                                                           : VIP_ERROR_RESOURCE;
  auto m = std::make_unique<MemRegion>();
  m->region = std::move(r.value());
  void* base = m->region.data();
  std::lock_guard lock(n->mu);
  n->regions[reinterpret_cast<uintptr_t>(base)] = std::move(m);
  *VirtualAddress = base;
  return VIP_SUCCESS;
}

VIP_RETURN VipClanFreeMem(VIP_NIC_HANDLE NicHandle, VIP_PVOID VirtualAddress) {
  NicImpl* n = nic_of(NicHandle);
  if (!n) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(n->mu);
  auto it = n->regions.find(reinterpret_cast<uintptr_t>(VirtualAddress));
  if (it == n->regions.end()) return VIP_INVALID_PARAMETER;
  {
    std::lock_guard region_lock(it->second->mu);
    if (it->second->outstanding > 0) return VIP_INVALID_STATE;
  }
  // Descriptors in it not yet handed back, or sends still reading from it.
  if (it->second->in_use.load(std::memory_order_acquire) > 0) return VIP_INVALID_STATE;
  for (auto& [h, m] : n->mems) {
    if (m.region == it->second.get()) return VIP_INVALID_STATE;  // still registered
  }
  n->regions.erase(it);
  return VIP_SUCCESS;
}

VIP_RETURN VipRegisterMem(VIP_NIC_HANDLE NicHandle, VIP_PVOID VirtualAddress, VIP_ULONG Length,
                          VIP_MEM_ATTRIBUTES* MemAttributes, VIP_MEM_HANDLE* MemHandle) {
  NicImpl* n = nic_of(NicHandle);
  if (!n || !VirtualAddress || Length == 0 || !MemAttributes || !MemHandle) {
    return VIP_INVALID_PARAMETER;
  }
  auto* p = static_cast<Ptag*>(MemAttributes->Ptag);
  if (!is_handle(p, Kind::kPtag) || p->nic != n) return VIP_INVALID_PTAG;
  auto a = reinterpret_cast<uintptr_t>(VirtualAddress);
  if (a + Length < a) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(n->mu);
  // Inside one VipClanAllocMem block: peers may write it (receive buffers).
  MemRegion* region = nullptr;
  auto it = n->regions.upper_bound(a);
  if (it != n->regions.begin()) {
    --it;
    if (a + Length <= it->first + it->second->region.size()) region = it->second.get();
  }
  if (n->mems.size() >= n->nic->config().max_regions * 16u) return VIP_ERROR_RESOURCE;
  VIP_MEM_HANDLE h = n->next_mem++;
  if (n->next_mem == 0) n->next_mem = 1;
  n->mems[h] = MemReg{a, Length, p, region, *MemAttributes};
  *MemHandle = h;
  return VIP_SUCCESS;
}

VIP_RETURN VipDeregisterMem(VIP_NIC_HANDLE NicHandle, VIP_PVOID VirtualAddress,
                            VIP_MEM_HANDLE MemHandle) {
  NicImpl* n = nic_of(NicHandle);
  if (!n) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(n->mu);
  auto it = n->mems.find(MemHandle);
  if (it == n->mems.end() || it->second.addr != reinterpret_cast<uintptr_t>(VirtualAddress)) {
    return VIP_INVALID_PARAMETER;
  }
  n->mems.erase(it);
  n->mem_epoch.fetch_add(1, std::memory_order_release);  // VIs drop their copies
  return VIP_SUCCESS;
}

VIP_RETURN VipQueryMem(VIP_NIC_HANDLE NicHandle, VIP_PVOID VirtualAddress, VIP_MEM_HANDLE MemHandle,
                       VIP_MEM_ATTRIBUTES* MemAttributes) {
  NicImpl* n = nic_of(NicHandle);
  if (!n || !MemAttributes) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(n->mu);
  auto it = n->mems.find(MemHandle);
  if (it == n->mems.end() || it->second.addr != reinterpret_cast<uintptr_t>(VirtualAddress)) {
    return VIP_INVALID_PARAMETER;
  }
  *MemAttributes = it->second.attrs;
  return VIP_SUCCESS;
}

}  // extern "C"
