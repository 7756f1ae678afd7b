// SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF",
// 2012): a keyed pseudorandom function of a short message. The OOB manager
// derives from its secret one token per peer node with it, so that what one
// peer learns says nothing about the token another peer holds.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace clan {

using SipKey = std::array<uint8_t, 16>;

uint64_t siphash24(const SipKey& key, std::span<const std::byte> message);

}  // namespace clan
