// omniTransport header decoder (omnitransport/header.*): any bytes as one
// datagram. Contract: a datagram decode() accepts re-encodes to exactly its
// first kHeaderSize bytes, and its size field equals the datagram's length;
// one it rejects leaves the output header untouched.
#include <cstring>

#include "fuzz/check.hpp"
#include "omnitransport/header.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  const otp::Header untouched{otp::PacketType::kReclaimAck, true, 0xBEEF, 7, 9, true};
  otp::Header h = untouched;
  const otp::Errc e = otp::decode(bytes, size, h);
  if (e != otp::Errc::kOk) {
    FUZZ_CHECK(h == untouched);
    return 0;
  }
  FUZZ_CHECK(size >= otp::kHeaderSize && size <= otp::kMaxPacketSize);
  FUZZ_CHECK(h.size == size);
  std::byte again[otp::kHeaderSize];
  otp::encode(h, again);
  FUZZ_CHECK(std::memcmp(again, bytes, otp::kHeaderSize) == 0);
  otp::Header twice;
  FUZZ_CHECK(otp::decode(again, otp::kHeaderSize, twice) == (size == otp::kHeaderSize
                                                                  ? otp::Errc::kOk
                                                                  : otp::Errc::kSizeMismatch));
  return 0;
}
