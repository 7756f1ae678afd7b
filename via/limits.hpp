// The VI Provider Library's limits (VipQueryNic reports them) and the ring
// sizes they bound.
#pragma once

#include <cstddef>
#include <cstdint>

#include "via/wire.hpp"

namespace via {

// Limits reported by VipQueryNic.
constexpr uint32_t kMaxDescriptorsPerQueue = 256;
constexpr uint32_t kMaxSegments = 8;
constexpr uint32_t kMaxTransfer = 16u << 20;
constexpr uint32_t kMaxCqEntries = 1u << 16;
constexpr uint32_t kTransferSlots = 512;  // > queue depth: a sender never finds it full
// ... even with the read pointer an eighth of the ring behind (TransferReceiver::consume).
static_assert(kTransferSlots - kTransferSlots / 8 > kMaxDescriptorsPerQueue);
// Cookie ring slots: the same bound as the transfer queue's.
constexpr uint32_t kCookieSlots = 512;
static_assert(kCookieSlots - kCookieSlots / 8 > kMaxDescriptorsPerQueue);
constexpr size_t kCookieMessage = wire::kCkMessage;
static_assert(sizeof(wire::PostHeader) + kMaxSegments * sizeof(wire::PostSegment) <=
              kCookieMessage);

}  // namespace via
