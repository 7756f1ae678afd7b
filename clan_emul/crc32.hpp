// CRCs of the emulated link. No state, any thread.
//
// CRC-32 (IEEE 802.3 polynomial 0x04C11DB7, reflected, init and final XOR
// 0xFFFFFFFF): the generator of the AAL5 trailer CRC, here in the common
// reflected bit order. Check value: crc32("123456789") == 0xCBF43926.
// Slicing-by-8, tables built at compile time.
//
// CRC-32C (Castagnoli polynomial 0x1EDC6F41, reflected, init and final XOR
// 0xFFFFFFFF), what the datagram channel's frames carry: computed by the
// SSE4.2 crc32 instruction where the CPU has it (checked once at run time),
// else by slicing-by-8. Check value: crc32c("123456789") == 0xE3069283.
//
// Both detect every error burst of up to 32 bits, so any single corrupted
// byte of a frame.
#pragma once

#include <cstddef>
#include <cstdint>

namespace clan {

// Continues a running CRC: crc32_update(crc32_update(0, a), b) == crc32(a ++ b).
// Start with 0 (the init/final XOR is applied inside).
uint32_t crc32_update(uint32_t crc, const void* data, size_t len);
inline uint32_t crc32(const void* data, size_t len) { return crc32_update(0, data, len); }

// The same for CRC-32C, with the fastest implementation this CPU has.
uint32_t crc32c_update(uint32_t crc, const void* data, size_t len);
inline uint32_t crc32c(const void* data, size_t len) { return crc32c_update(0, data, len); }
// The table-driven CRC-32C, whatever the CPU (what crc32c_update falls back to).
uint32_t crc32c_update_portable(uint32_t crc, const void* data, size_t len);
// crc32c_update uses the SSE4.2 instruction.
bool crc32c_hardware();

}  // namespace clan
