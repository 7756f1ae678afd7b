// libfabric, loaded when the first wire or udp channel opens (dlopen), not
// when a program starts: loading it brings the providers' libraries in
// (verbs, psm, efa...), whose start-up costs a process a fifth of a second
// here, which a program that never leaves its host must not pay. Only
// libfabric's few exported functions go through here; the rest of its API
// is inline calls through each object's operations.
#pragma once

#include <rdma/fabric.h>

#include "clan_emul/error.hpp"

namespace clan::wire {

// kOk once libfabric is loaded (the first call loads it); else kSystem,
// with dlopen's words and what to install.
Errc load_libfabric();

int clan_fi_getinfo(uint32_t version, const char* node, const char* service, uint64_t flags,
                    const fi_info* hints, fi_info** info);
void clan_fi_freeinfo(fi_info* info);
fi_info* clan_fi_dupinfo(const fi_info* info);
inline fi_info* clan_fi_allocinfo() { return clan_fi_dupinfo(nullptr); }
int clan_fi_fabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context);
const char* clan_fi_strerror(int errnum);

}  // namespace clan::wire
