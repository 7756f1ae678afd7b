// The NIC (a clan::Nic and the OOB manager, one per VipOpenNic), its
// protection tags, attributes and statistics.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "clan_emul/resident_set.hpp"
#include "via/internal.hpp"

namespace via {

Vi* NicImpl::find_vi(uint64_t id) {
  std::lock_guard lock(mu);
  auto it = vis.find(id);
  return it == vis.end() ? nullptr : it->second;
}

clan::WaitMode wait_mode_of(uint32_t vip_clan_wait, clan::WaitMode otherwise) {
  switch (vip_clan_wait) {
    case VIP_CLAN_WAIT_ADAPTIVE: return clan::WaitMode::kAdaptive;
    case VIP_CLAN_WAIT_POLL: return clan::WaitMode::kPoll;
    case VIP_CLAN_WAIT_BLOCK: return clan::WaitMode::kBlock;
    default: return otherwise;
  }
}

clan::WaitMode NicImpl::effective_wait_mode() const {
  return wait_mode_of(wait_mode.load(std::memory_order_relaxed), nic->wait_mode());
}

bool NicImpl::progress_vi(uint64_t id) {
  std::shared_lock gate(vi_gate);
  if (Vi* vi = find_vi(id)) {
    std::lock_guard lock(vi->mu);
    vi->progress();
    return vi->held && vi->conn;
  }
  return false;
}

}  // namespace via

using namespace via;

extern "C" {

namespace {
// The last receive region the VI mapped (it keeps that mapping even after
// the cache evicts it). The peer's channel block is imported with the VI's
// endpoint, which the NIC's imports do not count.
constexpr uint32_t kImportsPerVi = 1;
// Regions a connected VI exports: its channel block, and typically one
// block of receive buffers from VipClanAllocMem.
constexpr uint32_t kRegionsPerVi = 2;
}  // namespace

VIP_RETURN VipOpenNic(const VIP_CHAR* DeviceName, VIP_NIC_HANDLE* NicHandle) {
  return VipClanOpenNic(DeviceName, nullptr, NicHandle);
}

VIP_RETURN VipClanOpenNic(const VIP_CHAR* DeviceName, const VIP_CLAN_NIC_CONFIG* Config,
                          VIP_NIC_HANDLE* NicHandle) {
  if (!NicHandle) return VIP_INVALID_PARAMETER;
  std::string name = DeviceName ? DeviceName : "via-" + std::to_string(getpid());
  clan::NicConfig nc;
  nc.name = name;
  if (Config) {
    if (Config->Frames == 0 || Config->RemapNs > clan::kMaxSpinNs ||
        Config->Replacement > VIP_CLAN_REPLACEMENT_LRU) {
      return VIP_INVALID_PARAMETER;
    }
    nc.frames = static_cast<uint32_t>(std::min<VIP_ULONG>(Config->Frames, UINT32_MAX));
    nc.remap_cost = std::chrono::nanoseconds(Config->RemapNs);
    nc.replacement = Config->Replacement == VIP_CLAN_REPLACEMENT_RANDOM ? clan::Replacement::kRandom
                                                                        : clan::Replacement::kLru;
  }
  if (Config && Config->WireListen && *Config->WireListen) nc.wire.listen = Config->WireListen;
  if (Config && Config->WireProvider && *Config->WireProvider) nc.wire.provider = Config->WireProvider;
  // A connected VI imports 2 of its peer's regions, and the PIO mapping
  // cache a few more: room for MaxVI connections (see VipQueryNic).
  nc.max_imports = kImportsPerVi * (nc.max_regions / kRegionsPerVi) + 4096;
  auto nic = clan::Nic::open(nc);
  if (!nic) return VIP_ERROR_RESOURCE;
  clan::OobConfig oc;
  oc.node = name;
  if (Config && Config->OobListen && *Config->OobListen) oc.listen = Config->OobListen;
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

VIP_RETURN VipClanQueryNicOobPort(VIP_NIC_HANDLE NicHandle, VIP_UINT16* Port) {
  NicImpl* n = nic_of(NicHandle);
  if (!n || !Port) return VIP_INVALID_PARAMETER;
  *Port = n->oob->listen_port();
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
  // Regions bound it (kRegionsPerVi), endpoints (one a connected VI) and
  // imports (kImportsPerVi, beyond what the mapping cache may hold).
  const clan::NicConfig& c = n->nic->config();
  a->MaxVI = std::min<VIP_ULONG>({c.max_regions / kRegionsPerVi, c.max_endpoints,
                                  (c.max_imports - 4096) / kImportsPerVi});
  a->MaxDescriptorsPerQueue = kMaxDescriptorsPerQueue;
  a->MaxSegmentsPerDesc = kMaxSegments;
  a->MaxCQ = n->nic->config().max_event_queues - 1;  // one is the re-mapping thread's
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

VIP_RETURN VipClanSetNicAttributes(VIP_NIC_HANDLE NicHandle, const VIP_CLAN_NIC_ATTRIBUTES* a) {
  NicImpl* n = nic_of(NicHandle);
  if (!n || !a || a->MappingCacheEntries == 0 || a->MappingCacheEntries > 4096 ||
      a->WaitMode > VIP_CLAN_WAIT_BLOCK) {
    return VIP_INVALID_PARAMETER;
  }
  {
    std::lock_guard lock(n->mu);
    n->revoke_on_completion.store(a->RevokeOnCompletion != VIP_FALSE, std::memory_order_relaxed);
    n->wait_mode.store(a->WaitMode, std::memory_order_relaxed);
  }
  n->cache.set_capacity(a->MappingCacheEntries);
  return VIP_SUCCESS;
}

VIP_RETURN VipClanQueryNicAttributes(VIP_NIC_HANDLE NicHandle, VIP_CLAN_NIC_ATTRIBUTES* a) {
  NicImpl* n = nic_of(NicHandle);
  if (!n || !a) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(n->mu);
  a->RevokeOnCompletion = n->revoke_on_completion.load(std::memory_order_relaxed) ? VIP_TRUE : VIP_FALSE;
  a->MappingCacheEntries = static_cast<VIP_ULONG>(n->cache.capacity());
  a->WaitMode = n->wait_mode.load(std::memory_order_relaxed);
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
  const clan::ResidentSetStats r = n->nic->resident_set_stats();
  s->Remaps = r.remaps;
  s->Evictions = r.evictions;
  return VIP_SUCCESS;
}

}  // extern "C"
