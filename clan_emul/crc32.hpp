// CRC-32 (IEEE 802.3 polynomial 0x04C11DB7, reflected, init and final XOR
// 0xFFFFFFFF): the generator of the AAL5 trailer CRC, here in the common
// reflected bit order. It detects every error burst of up to 32 bits, so any
// single corrupted byte of a frame. Check value: crc32("123456789") ==
// 0xCBF43926. Slicing-by-8, tables built at compile time; no state, any thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace clan {

// Continues a running CRC: crc32_update(crc32_update(0, a), b) == crc32(a ++ b).
// Start with 0 (the init/final XOR is applied inside).
uint32_t crc32_update(uint32_t crc, const void* data, size_t len);
inline uint32_t crc32(const void* data, size_t len) { return crc32_update(0, data, len); }

}  // namespace clan
