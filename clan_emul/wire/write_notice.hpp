// What follows every wire write on the same ordered endpoint (a send after
// the writes: FI_ORDER_SAW): which region of the target NIC it wrote,
// where and how much, so that the target's NIC logic delivers the write
// and fires the tripwires it touched (paper 000 sect. 2.3), as a local
// writer does. It travels as a message, not as remote CQ data: a
// message's completion names the receive it landed in, and so the link it
// came over, which lets the target refuse a notice for a region that link
// never imported (remote CQ data arrives with nothing that says whence).
// The target checks region, offset and length, since they come from
// another host.
#pragma once

#include <cstddef>
#include <cstdint>

namespace clan::wire {

// One write goes as parts of at most this many bytes, each with its notice.
inline constexpr size_t kMaxNoticeLength = size_t{1} << 20;
// Regions of the first 65536 slots and first 4 GiB are written over the wire.
inline constexpr uint64_t kMaxWireRegion = 0xffff;
inline constexpr uint64_t kMaxWireRegionBytes = uint64_t{1} << 32;

struct WriteNotice {
  uint32_t region = 0;
  uint32_t length = 0;
  uint64_t offset = 0;
};

constexpr WriteNotice encode_notice(uint32_t region, uint64_t offset, size_t length) {
  return WriteNotice{region, static_cast<uint32_t>(length), offset};
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
