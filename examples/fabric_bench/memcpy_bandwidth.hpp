// The bandwidth reference of bench_fabric_stream: single-thread memcpy.
#pragma once

#include <cstddef>

namespace fabric_bench {

constexpr size_t kMemcpyBlock = 64 * 1024;
constexpr size_t kMemcpyLarge = size_t{256} << 20;  // far beyond any cache of this VM

// Bytes copied per second by memcpy of `block` bytes over `secs` seconds.
// Two references are measured: a cache-resident 64 KiB block (the ceiling of
// a copy that never leaves one core's cache) and a large block
// (kMemcpyLarge, far beyond the caches: the memory-bandwidth figure that a
// transport moving data between cores is measured against; see
// examples/DESIGN.md).
double memcpy_bandwidth(size_t block, double secs);

}  // namespace fabric_bench
