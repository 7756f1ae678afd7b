// DMQ receiver (clan_emul/dmq_receiver.*): a hostile peer holding the ring's
// cookie writes whatever the input says through an aperture (words anywhere
// in the ring and its reserved area, well-formed message headers for chosen
// positions and lengths, the lazy write pointer, the closed flag) between
// the receiver's try_receive()/release() calls.
// Contracts: try_receive() never waits; a message it returns lies wholly in
// the receiver's region, at the position its own read pointer says, behind
// the header that position requires, and no larger than max_message; once it
// reports an error (kCorrupt, kClosed) it reports that error ever after; when
// readable() says nothing waits, try_receive() finds nothing.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstring>

#include "clan_emul/aperture.hpp"
#include "clan_emul/dmq_receiver.hpp"
#include "clan_emul/dmq_sender.hpp"
#include "fuzz/check.hpp"
#include "fuzz/nic_pair.hpp"

using namespace clan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  DmqConfig config;
  config.ring_bytes = 4096;
  config.max_message = in.ConsumeIntegralInRange<size_t>(1, 2040);
  auto& n = fuzz::nics();
  auto rx = std::move(DmqReceiver::create(*n.b, config).value());
  auto tx = std::move(DmqSender::create(*n.a, config).value());  // where read pointers go
  FUZZ_CHECK(rx->attach(tx->cookie()) == Errc::kOk);
  auto hostile = std::move(n.a->import(rx->cookie()).value());
  const size_t region_bytes = dmq::receiver_region_bytes(config);
  const std::byte* base = rx->region().data();

  uint64_t read_i = 0;  // what the receiver has consumed, as we count it
  Errc broken = Errc::kOk;
  for (int step = 0; step < 128 && in.remaining_bytes() > 0; ++step) {
    switch (in.ConsumeIntegralInRange<int>(0, 5)) {
      case 0: {  // a word anywhere the peer may write
        const size_t at = in.ConsumeIntegralInRange<size_t>(0, region_bytes / 8 - 1) * 8;
        (void)hostile.write_word(at, in.ConsumeIntegral<uint64_t>());
        break;
      }
      case 1: {  // a well-formed header for a position near ours
        const uint64_t pos = read_i + in.ConsumeIntegralInRange<uint64_t>(0, 64) * 8;
        const auto len = in.ConsumeIntegralInRange<uint32_t>(0, 4200);
        (void)hostile.write_word(dmq::kRing + (pos & (config.ring_bytes - 1)), dmq::header(pos, len));
        break;
      }
      case 2: {  // the write pointer: near ours, or anything
        const uint64_t lw = in.ConsumeBool()
                                ? read_i + in.ConsumeIntegralInRange<uint64_t>(0, 600) * 8
                                : in.ConsumeIntegral<uint64_t>();
        (void)hostile.write_word(dmq::kLazyWrite, lw);
        break;
      }
      case 3: (void)hostile.write_word(dmq::kSenderClosed, in.ConsumeIntegralInRange<uint64_t>(0, 2)); break;
      case 4:
      case 5: {
        const bool readable = rx->readable();
        auto m = rx->try_receive();
        if (broken != Errc::kOk) {
          FUZZ_CHECK(!m && m.error() == broken);
          break;
        }
        if (!m) {
          if (m.error() != Errc::kTimeout) broken = m.error();
          FUZZ_CHECK(m.error() == Errc::kTimeout || m.error() == Errc::kCorrupt ||
                     m.error() == Errc::kClosed);
          if (m.error() != Errc::kTimeout) FUZZ_CHECK(readable);
          break;
        }
        FUZZ_CHECK(readable);
        const std::byte* at = base + dmq::kRing + (read_i & (config.ring_bytes - 1)) + dmq::kHeader;
        FUZZ_CHECK(m->data == at);
        FUZZ_CHECK(m->size <= config.max_message);
        FUZZ_CHECK(m->data + m->size <= base + region_bytes);
        uint64_t hdr;
        std::memcpy(&hdr, m->data - dmq::kHeader, 8);
        FUZZ_CHECK(hdr == dmq::header(read_i, static_cast<uint32_t>(m->size)));
        read_i += dmq::kHeader + dmq::align8(m->size);
        (void)rx->release();
        break;
      }
    }
  }
  return 0;
}
