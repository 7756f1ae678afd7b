// Datagram frame (clan_emul/datagram_layout.* and datagram_receiver.*): input
// frames, each raw or with its CRC made good (so the length check is
// reached), checked by check_frame() and then carried by a real DMQ into a
// DatagramReceiver, which takes them alternately in place and copied out.
// Contracts: check_frame() accepts exactly the frames whose size, CRC and
// length field agree, and an accepted frame re-encodes to the same bytes;
// the receiver delivers exactly the accepted frames, in order, byte for
// byte, with their sequence numbers, and counts every other one as
// discarded (corrupt or malformed, as check_frame() said).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstring>
#include <vector>

#include "clan_emul/datagram_layout.hpp"
#include "clan_emul/datagram_receiver.hpp"
#include "clan_emul/dmq_sender.hpp"
#include "fuzz/check.hpp"
#include "fuzz/nic_pair.hpp"

namespace {

using namespace clan;
using namespace clan::dgram;

struct Frame {
  std::vector<std::byte> bytes;
  FrameCheck check;
  uint64_t sequence = 0;
};

Frame make_frame(FuzzedDataProvider& in, size_t mtu) {
  Frame f;
  const bool fix_crc = in.ConsumeBool();
  const size_t size = in.ConsumeIntegralInRange<size_t>(0, kFrameHeader + mtu + 8);
  for (uint8_t b : in.ConsumeBytes<uint8_t>(size)) f.bytes.push_back(std::byte{b});
  if (fix_crc && f.bytes.size() >= kFrameHeader) {
    const uint32_t crc = frame_crc(f.bytes.data(), f.bytes.data() + kFrameHeader,
                                   f.bytes.size() - kFrameHeader);
    std::memcpy(f.bytes.data() + kCrc, &crc, 4);
  }
  f.check = check_frame(f.bytes.data(), f.bytes.size(), mtu, &f.sequence);
  const size_t n = f.bytes.size();
  if (n < kFrameHeader || n - kFrameHeader > mtu) FUZZ_CHECK(f.check == FrameCheck::kMalformed);
  if (f.check == FrameCheck::kOk) {
    std::vector<std::byte> again(n);
    encode_frame(again.data(), f.sequence, f.bytes.data() + kFrameHeader, n - kFrameHeader);
    FUZZ_CHECK(again == f.bytes);
  }
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  DatagramConfig config;
  config.mtu = in.ConsumeIntegralInRange<size_t>(1, 512);
  config.ring_bytes = 16 * 1024;
  auto& n = fuzz::nics();
  auto rx = std::move(DatagramReceiver::create(*n.b, config).value());
  auto tx = std::move(DmqSender::create(*n.a, dmq_config(config)).value());
  FUZZ_CHECK(tx->attach(rx->cookie()) == Errc::kOk);
  FUZZ_CHECK(rx->attach(tx->cookie()) == Errc::kOk);

  std::vector<Frame> carried;  // what the DMQ took
  while (in.remaining_bytes() > 0 && carried.size() < 64) {
    Frame f = make_frame(in, config.mtu);
    if (f.bytes.size() > kFrameHeader + config.mtu) continue;  // larger than the DMQ carries
    if (tx->send(f.bytes.data(), f.bytes.size(), Deadline::now()) != Errc::kOk) break;  // ring full
    carried.push_back(std::move(f));
  }
  FUZZ_CHECK(tx->close() == Errc::kOk);

  std::vector<std::byte> buf(config.mtu);
  size_t next = 0;  // the next carried frame the receiver may deliver
  DatagramReceiverStats want;
  for (bool in_place = false;; in_place = !in_place) {
    const std::byte* got = nullptr;
    size_t got_size = 0;
    uint64_t seq = 0;
    Errc e = Errc::kOk;
    if (in_place) {
      auto d = rx->try_receive();
      if (d) got = d->data, got_size = d->size, seq = d->sequence; else e = d.error();
    } else {
      auto r = rx->receive_into(buf.data(), buf.size(), Deadline::now(), &seq);
      if (r) got = buf.data(), got_size = *r; else e = r.error();
    }
    while (next < carried.size() && carried[next].check != FrameCheck::kOk) {
      ++want.frames;
      ++(carried[next].check == FrameCheck::kCorrupt ? want.discarded_corrupt
                                                     : want.discarded_malformed);
      ++next;
    }
    if (!got) {
      FUZZ_CHECK(e == Errc::kClosed);
      FUZZ_CHECK(next == carried.size());
      break;
    }
    FUZZ_CHECK(next < carried.size());
    const Frame& f = carried[next++];
    FUZZ_CHECK(got_size == f.bytes.size() - kFrameHeader);
    FUZZ_CHECK(std::memcmp(got, f.bytes.data() + kFrameHeader, got_size) == 0);
    FUZZ_CHECK(seq == f.sequence);
    ++want.frames;
    if (in_place) FUZZ_CHECK(rx->release() == Errc::kOk);
  }
  const auto& s = rx->stats();
  FUZZ_CHECK(s.frames == want.frames);
  FUZZ_CHECK(s.discarded_corrupt == want.discarded_corrupt);
  FUZZ_CHECK(s.discarded_malformed == want.discarded_malformed);
  FUZZ_CHECK(s.delivered + s.discarded_corrupt + s.discarded_malformed == s.frames);
  return 0;
}
