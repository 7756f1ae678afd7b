#include "clan_emul/crc32.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace clan {
namespace {

constexpr uint32_t kPolyReflected = 0xEDB88320u;   // CRC-32
constexpr uint32_t kCastagnoliReflected = 0x82F63B78u;  // CRC-32C

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables make_tables(uint32_t poly) {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ poly : c >> 1;
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (size_t s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
  return t;
}

constexpr Tables kTables = make_tables(kPolyReflected);
constexpr Tables kTablesC = make_tables(kCastagnoliReflected);

uint32_t slicing_by_8(const Tables& t, uint32_t crc, const void* data, size_t len) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t c = ~crc;
  // Slicing-by-8 over little-endian 64-bit words (x86-64 and aarch64 Linux).
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "slicing-by-8 assumes little endian");
  while (len >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    w ^= c;
    c = t[7][w & 0xff] ^ t[6][(w >> 8) & 0xff] ^ t[5][(w >> 16) & 0xff] ^ t[4][(w >> 24) & 0xff] ^
        t[3][(w >> 32) & 0xff] ^ t[2][(w >> 40) & 0xff] ^ t[1][(w >> 48) & 0xff] ^ t[0][w >> 56];
    p += 8;
    len -= 8;
  }
  while (len--) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xff];
  return ~c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(uint32_t crc, const void* data, size_t len) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t c = ~crc;
  while (len >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    c = _mm_crc32_u64(c, w);
    p += 8;
    len -= 8;
  }
  auto c32 = static_cast<uint32_t>(c);
  while (len--) c32 = _mm_crc32_u8(c32, *p++);
  return ~c32;
}

bool detect_sse42() { return __builtin_cpu_supports("sse4.2"); }
#else
bool detect_sse42() { return false; }
#endif

const bool kHardware = detect_sse42();

}  // namespace

uint32_t crc32_update(uint32_t crc, const void* data, size_t len) {
  return slicing_by_8(kTables, crc, data, len);
}

uint32_t crc32c_update_portable(uint32_t crc, const void* data, size_t len) {
  return slicing_by_8(kTablesC, crc, data, len);
}

uint32_t crc32c_update(uint32_t crc, const void* data, size_t len) {
#if defined(__x86_64__)
  if (kHardware) return crc32c_sse42(crc, data, len);
#endif
  return crc32c_update_portable(crc, data, len);
}

bool crc32c_hardware() { return kHardware; }

}  // namespace clan
