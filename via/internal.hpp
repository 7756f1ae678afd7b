// The objects behind the VIPL handles. Internal to via/.
//
// Locks: a VI's mutex may be held while taking its NIC's or a CQ's mutex,
// never the other way round. Nothing blocks while holding a lock, except the
// bounded wait for a VI's own DMA when it disconnects.
#pragma once

#include <chrono>

#include "clan_emul/deadline.hpp"
#include "clan_emul/oob_listener.hpp"
#include "via/conn.hpp"
#include "via/containers.hpp"
#include "via/cq.hpp"
#include "via/handles.hpp"
#include "via/limits.hpp"
#include "via/memory.hpp"
#include "via/nic_impl.hpp"
#include "via/vi.hpp"
#include "via/vipl.h"
#include "via/wire.hpp"

namespace via {

// A pending connection request (VipConnectWait's result).
struct ConnReq {
  NicImpl* nic;
  clan::OobRequest request;
  wire::Hello hello;
};

// A VIPL timeout in ms (VIP_INFINITE: none) from now.
inline clan::Deadline deadline_ms(VIP_ULONG ms) {
  if (ms == VIP_INFINITE) return clan::Deadline::never();
  return clan::Deadline::after(std::chrono::milliseconds(ms));
}

}  // namespace via
