// The VIPL handles: what each is, checked on every call (handles.cpp).
#pragma once

#include "via/vipl.h"

namespace via {

struct NicImpl;
struct Vi;
struct Cq;

// Handle validation: every handle given out is registered with its kind; a
// call with a stale or foreign handle gets VIP_INVALID_PARAMETER.
enum class Kind { kNic, kVi, kCq, kPtag, kConn };
void register_handle(const void* h, Kind k);
void unregister_handle(const void* h);
bool is_handle(const void* h, Kind k);

// The objects behind VIPL handles, or null for a stale or foreign handle.
inline NicImpl* nic_of(VIP_NIC_HANDLE h) {
  return is_handle(h, Kind::kNic) ? static_cast<NicImpl*>(h) : nullptr;
}
inline Cq* cq_of(VIP_CQ_HANDLE h) { return is_handle(h, Kind::kCq) ? static_cast<Cq*>(h) : nullptr; }
inline Vi* vi_of(VIP_VI_HANDLE h) { return is_handle(h, Kind::kVi) ? static_cast<Vi*>(h) : nullptr; }

}  // namespace via
