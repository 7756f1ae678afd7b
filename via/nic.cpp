// NIC, protection tags, memory registration, completion queues, name service.
#include <algorithm>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "via/internal.hpp"

namespace via {

namespace {
std::mutex g_handles_mu;
std::unordered_map<const void*, Kind>& handles() {
  static std::unordered_map<const void*, Kind> h;
  return h;
}
// Bumped (under g_handles_mu) whenever a handle goes.
std::atomic<uint64_t> g_handles_epoch{1};
// Per thread and kind: the last few handles found valid, and in which epoch.
struct SeenHandle {
  const void* handle = nullptr;
  uint64_t epoch = 0;
};
constexpr size_t kSeenPerKind = 4;
thread_local SeenHandle t_seen[5][kSeenPerKind];
thread_local uint32_t t_seen_next[5];
}  // namespace

void register_handle(const void* h, Kind k) {
  std::lock_guard lock(g_handles_mu);
  handles()[h] = k;
}
void unregister_handle(const void* h) {
  std::lock_guard lock(g_handles_mu);
  handles().erase(h);
  g_handles_epoch.fetch_add(1, std::memory_order_release);
}
bool is_handle(const void* h, Kind k) {
  if (h == nullptr) return false;
  // The common case, a thread using the same handles again: no shared lock.
  const auto kind = static_cast<size_t>(k);
  const uint64_t epoch = g_handles_epoch.load(std::memory_order_acquire);
  for (const SeenHandle& seen : t_seen[kind]) {
    if (seen.handle == h && seen.epoch == epoch) return true;
  }
  std::lock_guard lock(g_handles_mu);
  auto it = handles().find(h);
  if (it == handles().end() || it->second != k) return false;
  t_seen[kind][t_seen_next[kind]++ % kSeenPerKind] =
      SeenHandle{h, g_handles_epoch.load(std::memory_order_relaxed)};
  return true;
}

clan::Deadline deadline_ms(VIP_ULONG ms) {
  if (ms == VIP_INFINITE) return clan::Deadline::never();
  return clan::Deadline::after(std::chrono::milliseconds(ms));
}

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

Vi* NicImpl::find_vi(uint64_t id) {
  std::lock_guard lock(mu);
  auto it = vis.find(id);
  return it == vis.end() ? nullptr : it->second;
}

void NicImpl::progress_vi(uint64_t id) {
  std::shared_lock gate(vi_gate);
  if (Vi* vi = find_vi(id)) {
    std::lock_guard lock(vi->mu);
    vi->progress();
  }
}

bool Cq::take_turn(clan::Deadline deadline) {
  std::unique_lock lock(turn_mu);
  if (turn_taken) {
    ++turn_waiters;
    auto free = [&] { return !turn_taken; };
    const bool came = deadline.is_never() ? (turn_cv.wait(lock, free), true)
                                          : turn_cv.wait_until(lock, deadline.when(), free);
    --turn_waiters;
    if (!came) return false;
  }
  turn_taken = true;
  return true;
}

bool Cq::try_take_turn() {
  std::lock_guard lock(turn_mu);
  if (turn_taken) return false;
  turn_taken = true;
  return true;
}

void Cq::give_turn() {
  std::lock_guard lock(turn_mu);
  turn_taken = false;
  if (turn_waiters > 0) turn_cv.notify_one();
}

void Cq::push(Vi* vi, bool recv) {
  {
    std::lock_guard lock(mu);
    if (recv && vi->cq_readiness) {
      // The entry already queued says "this VI has receive completions";
      // it covers this one too.
      if (vi->recv_entry_queued) return;
      vi->recv_entry_queued = true;
    }
    entries.push_back({vi, recv});
  }
  eq.notify(kick);
}

}  // namespace via

using namespace via;

namespace {
NicImpl* nic_of(VIP_NIC_HANDLE h) {
  return is_handle(h, Kind::kNic) ? static_cast<NicImpl*>(h) : nullptr;
}
Cq* cq_of(VIP_CQ_HANDLE h) { return is_handle(h, Kind::kCq) ? static_cast<Cq*>(h) : nullptr; }
}  // namespace

extern "C" {

namespace {
// The peer's channel block, and the last receive region the VI mapped (it
// keeps that mapping even after the cache evicts it).
constexpr uint32_t kImportsPerVi = 2;
// Regions a connected VI exports: its channel block, and typically one
// block of receive buffers from VipClanAllocMem.
constexpr uint32_t kRegionsPerVi = 2;
}  // namespace

VIP_RETURN VipOpenNic(const VIP_CHAR* DeviceName, VIP_NIC_HANDLE* NicHandle) {
  if (!NicHandle) return VIP_INVALID_PARAMETER;
  std::string name = DeviceName ? DeviceName : "via-" + std::to_string(getpid());
  clan::NicConfig nc;
  nc.name = name;
  // A connected VI imports 2 of its peer's regions, and the PIO mapping
  // cache a few more: room for MaxVI connections (see VipQueryNic).
  nc.max_imports = kImportsPerVi * (nc.max_regions / kRegionsPerVi) + 4096;
  auto nic = clan::Nic::open(nc);
  if (!nic) return VIP_ERROR_RESOURCE;
  clan::OobConfig oc;
  oc.node = name;
  auto oob = clan::OobManager::start(oc);
  if (!oob) {
    return oob.error() == clan::Errc::kInvalidArgument ? VIP_INVALID_PARAMETER
                                                       : VIP_ERROR_RESOURCE;
  }
  auto* n = new NicImpl();
  n->nic = std::move(nic.value());
  n->oob = std::move(oob.value());
  n->name = name;
  register_handle(n, Kind::kNic);
  *NicHandle = n;
  return VIP_SUCCESS;
}

VIP_RETURN VipCloseNic(VIP_NIC_HANDLE NicHandle) {
  NicImpl* n = nic_of(NicHandle);
  if (!n) return VIP_INVALID_PARAMETER;
  unregister_handle(n);
  // Whatever the application left open goes with the NIC.
  std::vector<Vi*> vis;
  {
    std::lock_guard lock(n->mu);
    for (auto& [id, vi] : n->vis) vis.push_back(vi);
  }
  for (Vi* vi : vis) {
    {
      std::lock_guard lock(vi->mu);
      vi->teardown();
    }
    unregister_handle(vi);
    delete vi;
  }
  for (Cq* cq : n->cqs) {
    unregister_handle(cq);
    delete cq;
  }
  for (Ptag* p : n->ptags) {
    unregister_handle(p);
    delete p;
  }
  for (auto& [port, listener] : n->listeners) listener->close();  // wakes VipConnectWait
  n->listeners.clear();
  delete n;
  return VIP_SUCCESS;
}

VIP_RETURN VipQueryNic(VIP_NIC_HANDLE NicHandle, VIP_NIC_ATTRIBUTES* a) {
  NicImpl* n = nic_of(NicHandle);
  if (!n || !a) return VIP_INVALID_PARAMETER;
  std::memset(a, 0, sizeof *a);
  std::snprintf(a->Name, sizeof a->Name, "%s", n->name.c_str());
  a->HardwareVersion = 3;  // the MkIII CLAN NIC of paper 001
  a->ProviderVersion = 1;
  a->NicAddressLen = static_cast<VIP_UINT16>(n->name.size());
  a->LocalNicAddress = reinterpret_cast<const VIP_UINT8*>(n->name.c_str());
  a->ThreadSafe = VIP_TRUE;
  a->MaxDiscriminatorLen = VIP_CLAN_MAX_DISCRIMINATOR;
  a->MaxRegisterBytes = 1ul << 40;
  a->MaxRegisterRegions = n->nic->config().max_regions;
  a->MaxRegisterBlockBytes = 1ul << 40;
  // Regions bound it (kRegionsPerVi), and so do imports (kImportsPerVi,
  // beyond what the mapping cache may hold).
  a->MaxVI = std::min<VIP_ULONG>(n->nic->config().max_regions / kRegionsPerVi,
                                 (n->nic->config().max_imports - 4096) / kImportsPerVi);
  a->MaxDescriptorsPerQueue = kMaxDescriptorsPerQueue;
  a->MaxSegmentsPerDesc = kMaxSegments;
  a->MaxCQ = n->nic->config().max_event_queues;
  a->MaxCQEntries = kMaxCqEntries;
  a->MaxTransferSize = kMaxTransfer;
  a->NativeMTU = kMaxTransfer;
  a->MaxPtags = 1024;
  a->ReliabilityLevelSupport =
      VIP_SERVICE_UNRELIABLE | VIP_SERVICE_RELIABLE_DELIVERY | VIP_SERVICE_RELIABLE_RECEPTION;
  a->RDMAReadSupport = 0;
  return VIP_SUCCESS;
}

VIP_RETURN VipCreatePtag(VIP_NIC_HANDLE NicHandle, VIP_PROTECTION_HANDLE* ProtectionTag) {
  NicImpl* n = nic_of(NicHandle);
  if (!n || !ProtectionTag) return VIP_INVALID_PARAMETER;
  auto* p = new Ptag{n};
  {
    std::lock_guard lock(n->mu);
    if (n->ptags.size() >= 1024) {
      delete p;
      return VIP_ERROR_RESOURCE;
    }
    n->ptags.insert(p);
  }
  register_handle(p, Kind::kPtag);
  *ProtectionTag = p;
  return VIP_SUCCESS;
}

VIP_RETURN VipDestroyPtag(VIP_NIC_HANDLE NicHandle, VIP_PROTECTION_HANDLE ProtectionTag) {
  NicImpl* n = nic_of(NicHandle);
  if (!n) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(n->mu);
  auto* p = static_cast<Ptag*>(ProtectionTag);
  if (!is_handle(p, Kind::kPtag) || p->nic != n) return VIP_INVALID_PTAG;
  for (auto& [h, m] : n->mems) {
    if (m.ptag == p) return VIP_INVALID_STATE;
  }
  for (auto& [id, vi] : n->vis) {
    if (vi->attrs.Ptag == p) return VIP_INVALID_STATE;
  }
  n->ptags.erase(p);
  unregister_handle(p);
  delete p;
  return VIP_SUCCESS;
}

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

VIP_RETURN VipCreateCQ(VIP_NIC_HANDLE NicHandle, VIP_ULONG EntryCount, VIP_CQ_HANDLE* CQHandle) {
  NicImpl* n = nic_of(NicHandle);
  if (!n || !CQHandle || EntryCount == 0 || EntryCount > kMaxCqEntries) {
    return VIP_INVALID_PARAMETER;
  }
  auto eq = n->nic->create_event_queue();
  if (!eq) return VIP_ERROR_RESOURCE;
  auto* cq = new Cq();
  cq->nic = n;
  cq->eq = std::move(eq.value());
  cq->capacity = EntryCount;
  auto kick = cq->eq.add_source(0);
  if (!kick) {
    delete cq;
    return VIP_ERROR_RESOURCE;
  }
  cq->kick = *kick;
  {
    std::lock_guard lock(n->mu);
    n->cqs.insert(cq);
  }
  register_handle(cq, Kind::kCq);
  *CQHandle = cq;
  return VIP_SUCCESS;
}

VIP_RETURN VipDestroyCQ(VIP_CQ_HANDLE CQHandle) {
  Cq* cq = cq_of(CQHandle);
  if (!cq) return VIP_INVALID_PARAMETER;
  NicImpl* n = cq->nic;
  {
    std::lock_guard lock(n->mu);
    if (cq->vis > 0) return VIP_INVALID_STATE;
    n->cqs.erase(cq);
  }
  unregister_handle(cq);
  delete cq;
  return VIP_SUCCESS;
}

VIP_RETURN VipResizeCQ(VIP_CQ_HANDLE CQHandle, VIP_ULONG EntryCount) {
  Cq* cq = cq_of(CQHandle);
  if (!cq || EntryCount == 0 || EntryCount > kMaxCqEntries) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(cq->mu);
  if (EntryCount < cq->entries.size()) return VIP_INVALID_PARAMETER;
  cq->capacity = EntryCount;
  return VIP_SUCCESS;
}

VIP_RETURN VipCQDone(VIP_CQ_HANDLE CQHandle, VIP_VI_HANDLE* ViHandle, VIP_BOOLEAN* RecvQueue) {
  Cq* cq = cq_of(CQHandle);
  if (!cq || !ViHandle || !RecvQueue) return VIP_INVALID_PARAMETER;
  // Completions are found by progressing the VIs the events name; while
  // another thread consumes the events, it does that.
  if (cq->try_take_turn()) {
    while (auto ev = cq->eq.poll()) {
      if (ev->source == cq->kick) continue;
      cq->nic->progress_vi(ev->user);
    }
    cq->give_turn();
  }
  std::lock_guard lock(cq->mu);
  if (cq->entries.empty()) return VIP_NOT_DONE;
  *ViHandle = cq->entries.front().first;
  *RecvQueue = cq->entries.front().second ? VIP_TRUE : VIP_FALSE;
  if (cq->entries.front().second) cq->entries.front().first->recv_entry_queued = false;
  cq->entries.pop_front();
  return VIP_SUCCESS;
}

VIP_RETURN VipCQWait(VIP_CQ_HANDLE CQHandle, VIP_ULONG Timeout, VIP_VI_HANDLE* ViHandle,
                     VIP_BOOLEAN* RecvQueue) {
  Cq* cq = cq_of(CQHandle);
  if (!cq || !ViHandle || !RecvQueue) return VIP_INVALID_PARAMETER;
  const clan::Deadline deadline = deadline_ms(Timeout);
  for (;;) {
    if (VipCQDone(CQHandle, ViHandle, RecvQueue) == VIP_SUCCESS) return VIP_SUCCESS;
    uint32_t w = cq->wakes.load(std::memory_order_acquire);
    while (w != 0 && !cq->wakes.compare_exchange_weak(w, w - 1, std::memory_order_acq_rel)) {
    }
    if (w != 0) return VIP_NOT_DONE;
    // One thread waits on the event queue; the others queue here. The one
    // that gets an event and progresses a VI takes the entry, or leaves it
    // to the next in line (whose VipCQDone finds it).
    if (!cq->take_turn(deadline)) return VIP_TIMEOUT;
    bool found;  // what the previous holder found, or a wake, while we queued
    {
      std::lock_guard lock(cq->mu);
      found = !cq->entries.empty() || cq->wakes.load(std::memory_order_acquire) != 0;
    }
    std::optional<clan::EventQueue::Event> ev;
    if (!found) {
      auto r = cq->eq.wait(deadline);
      if (r) ev = r.value();
    }
    if (ev && ev->source != cq->kick) cq->nic->progress_vi(ev->user);
    cq->give_turn();
    if (!found && !ev) return VIP_TIMEOUT;
  }
}

VIP_RETURN VipNSInit(VIP_NIC_HANDLE NicHandle, VIP_PVOID) {
  NicImpl* n = nic_of(NicHandle);
  if (!n) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(n->mu);
  n->ns_ready = true;
  return VIP_SUCCESS;
}

VIP_RETURN VipNSShutdown(VIP_NIC_HANDLE NicHandle) {
  NicImpl* n = nic_of(NicHandle);
  if (!n) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(n->mu);
  if (!n->ns_ready) return VIP_ERROR_NAMESERVICE;
  n->ns_ready = false;
  return VIP_SUCCESS;
}

VIP_RETURN VipNSGetHostByName(VIP_NIC_HANDLE NicHandle, VIP_CHAR* Name, VIP_NET_ADDRESS* Address,
                              VIP_ULONG NameIndex) {
  NicImpl* n = nic_of(NicHandle);
  if (!n || !Name || !Address) return VIP_INVALID_PARAMETER;
  {
    std::lock_guard lock(n->mu);
    if (!n->ns_ready) return VIP_ERROR_NAMESERVICE;
  }
  // Host names are OOB node names: one address each, the name itself.
  size_t len = std::strlen(Name);
  if (NameIndex != 0 || len == 0 || len > VIP_CLAN_MAX_HOST_ADDRESS) return VIP_ERROR_NAMESERVICE;
  for (size_t i = 0; i < len; ++i) {
    char c = Name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return VIP_ERROR_NAMESERVICE;
  }
  Address->HostAddressLen = static_cast<VIP_UINT16>(len);
  Address->DiscriminatorLen = 0;
  std::memcpy(Address->HostAddress, Name, len);
  return VIP_SUCCESS;
}

VIP_RETURN VipClanSetNicAttributes(VIP_NIC_HANDLE NicHandle, const VIP_CLAN_NIC_ATTRIBUTES* a) {
  NicImpl* n = nic_of(NicHandle);
  if (!n || !a || a->MappingCacheEntries == 0 || a->MappingCacheEntries > 4096) {
    return VIP_INVALID_PARAMETER;
  }
  {
    std::lock_guard lock(n->mu);
    n->revoke_on_completion.store(a->RevokeOnCompletion != VIP_FALSE, std::memory_order_relaxed);
  }
  n->cache.set_capacity(a->MappingCacheEntries);
  return VIP_SUCCESS;
}

VIP_RETURN VipClanCQWake(VIP_CQ_HANDLE CQHandle) {
  Cq* cq = cq_of(CQHandle);
  if (!cq) return VIP_INVALID_PARAMETER;
  cq->wakes.fetch_add(1, std::memory_order_acq_rel);
  cq->eq.notify(cq->kick);
  return VIP_SUCCESS;
}

VIP_RETURN VipClanQueryNicStats(VIP_NIC_HANDLE NicHandle, VIP_CLAN_NIC_STATS* s) {
  NicImpl* n = nic_of(NicHandle);
  if (!n || !s) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(n->mu);
  s->MappingHits = n->cache.hits() + n->mapping_hits;
  s->MappingMisses = n->cache.misses();
  s->MappingEvictions = n->cache.evictions();
  s->PioSends = n->pio_sends;
  s->DmaSends = n->dma_sends;
  s->DroppedSends = n->dropped_sends;
  for (auto& [id, vi] : n->vis) {
    s->MappingHits += vi->mapping_hits.load(std::memory_order_relaxed);
    s->PioSends += vi->pio_sends.load(std::memory_order_relaxed);
    s->DmaSends += vi->dma_sends.load(std::memory_order_relaxed);
    s->DroppedSends += vi->dropped_sends.load(std::memory_order_relaxed);
  }
  s->Revocations = n->revocations.load();
  return VIP_SUCCESS;
}

}  // extern "C"
