// The 64 bits of remote CQ data that every wire write carries
// (fi_writedata): which region of the target NIC it wrote, where and how
// much, so that the target's NIC logic can deliver it and fire the
// tripwires it touched (paper 000 sect. 2.3), as a local writer does.
// Region 16 bits, offset 32 bits, length 16 bits: larger writes go as
// several, and only regions of the first 65536 slots and first 4 GiB are
// written over the wire. The target checks all three against what it
// registered, since they come from another host.
#pragma once

#include <cstddef>
#include <cstdint>

namespace clan::wire {

inline constexpr size_t kMaxNoticeLength = 0xffff;
inline constexpr uint64_t kMaxWireRegion = 0xffff;
inline constexpr uint64_t kMaxWireRegionBytes = uint64_t{1} << 32;

struct WriteNotice {
  uint32_t region;
  uint32_t offset;
  uint32_t length;
};

constexpr uint64_t encode_notice(uint32_t region, uint64_t offset, size_t length) {
  return (uint64_t{region} << 48) | (offset << 16) | length;
}

constexpr WriteNotice decode_notice(uint64_t data) {
  return WriteNotice{static_cast<uint32_t>(data >> 48), static_cast<uint32_t>(data >> 16),
                     static_cast<uint32_t>(data & 0xffff)};
}

// The registration key a cookie's holder writes with: the cookie's secret
// with its region and generation folded in. A reissued cookie has a fresh
// secret and generation, so a key is never used for two registrations,
// and a stale writer's key never opens a later one.
constexpr uint64_t registration_key(uint64_t secret0, uint64_t secret1, uint32_t region, uint32_t generation) {
  const uint64_t rotated = (secret1 << 29) | (secret1 >> 35);
  return secret0 ^ rotated ^ ((uint64_t{generation} << 32) | region);
}

}  // namespace clan::wire
