// The NIC behind a VIP_NIC_HANDLE: the emulated CLAN NIC, the OOB manager
// and the tables of what the application created on it (nic.cpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>

#include "clan_emul/nic.hpp"
#include "clan_emul/oob_listener.hpp"
#include "clan_emul/oob_manager.hpp"
#include "via/mapping_cache.hpp"
#include "via/memory.hpp"
#include "via/vipl.h"

namespace via {

// A VIP_CLAN_WAIT_* value as a clan::WaitMode; `otherwise` for VIP_CLAN_WAIT_DEFAULT.
clan::WaitMode wait_mode_of(uint32_t vip_clan_wait, clan::WaitMode otherwise);

struct Vi;
struct Cq;

struct NicImpl {
  std::unique_ptr<clan::Nic> nic;
  std::unique_ptr<clan::OobManager> oob;
  std::string name;
  MappingCache cache{16};

  std::mutex mu;  // the tables below
  std::map<uintptr_t, std::unique_ptr<MemRegion>> regions;  // by base address
  std::map<VIP_MEM_HANDLE, MemReg> mems;
  // Bumped (under mu) whenever a registration goes: VIs' cached copies of
  // registrations from an older epoch are not used.
  std::atomic<uint64_t> mem_epoch{1};
  VIP_MEM_HANDLE next_mem = 1;
  std::set<Ptag*> ptags;
  std::map<uint64_t, Vi*> vis;  // by id
  std::set<Cq*> cqs;
  // Shared: a thread in VipConnectWait keeps its listener alive while
  // VipClanStopListening or VipCloseNic closes it.
  std::map<uint16_t, std::shared_ptr<clan::OobListener>> listeners;
  uint64_t next_vi = 1;
  bool ns_ready = false;
  std::atomic<bool> revoke_on_completion{true};
  std::atomic<uint32_t> wait_mode{VIP_CLAN_WAIT_DEFAULT};  // VipClanSetNicAttributes' WaitMode
  // How this NIC's waits go: its WaitMode, else the clan NIC's (CLAN_WAIT_MODE).
  clan::WaitMode effective_wait_mode() const;

  // Statistics of VIs destroyed (under mu); live VIs count their own.
  uint64_t pio_sends = 0, dma_sends = 0, dropped_sends = 0, mapping_hits = 0;
  std::atomic<uint64_t> revocations{0};

  // Under mu: the registration covering [p, p+len) with handle h, or null.
  const MemReg* find_mem(VIP_MEM_HANDLE h, const void* p, size_t len) const;
  // Takes r->mu. A posted receive descriptor's region is released (the last
  // one reissues its cookie if RevokeOnCompletion).
  void release(MemRegion* r);
  Vi* find_vi(uint64_t id);
  // Progresses the VI an event names, if it still exists. Shared hold of
  // vi_gate from the lookup to the end: VipDestroyVi takes it exclusively
  // to unlist a VI, so none is deleted under a CQ poller.
  // Progresses the VI `id`; true if it is left with held writes
  // (vi_held.cpp). Held writes wait for nothing under the VI's lock.
  bool progress_vi(uint64_t id);
  std::shared_mutex vi_gate;
};

}  // namespace via
