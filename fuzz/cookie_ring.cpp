// VIPL cookie ring (via/cookie_ring.*): an honest CookieSender pushes
// descriptor messages into a CookieReceiver's ring while a hostile peer,
// through apertures, writes whatever the input says: words anywhere in the
// ring (tags above all), and the read pointer and doorbell request the
// sender trusts.
// Contracts: peek() gives the slot of the next descriptor, and only once
// that slot's tag is the descriptor's number + 1; a slot the hostile peer
// never touched gives exactly the message pushed for that number, and
// nothing before; push() refuses (kCorrupt) exactly the read pointers that
// are ahead of it or leave no room, so it never writes over a slot the
// reader may not have read.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "clan_emul/aperture.hpp"
#include "fuzz/check.hpp"
#include "fuzz/nic_pair.hpp"
#include "via/cookie_ring.hpp"

using namespace via;
using clan::Errc;

namespace {

struct Slot {
  bool dirty = false;
  uint64_t position = ~0ull;
  std::vector<uint8_t> message;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const uint32_t slots = in.ConsumeIntegralInRange<uint32_t>(8, 24);
  const uint64_t first = in.ConsumeIntegralInRange<uint64_t>(0, 40);
  auto& n = fuzz::nics();
  // Each side's channel block: the receiver's holds the ring, the sender's
  // the read pointer and doorbell request the receiver writes back.
  const wire::BlockLayout lay = wire::block_layout(slots, 8);
  auto rx_block = std::move(n.b->export_region(lay.bytes).value());
  auto tx_block = std::move(n.a->export_region(lay.bytes).value());
  // The mappings outlive the ends that use them.
  auto to_rx = std::move(n.a->import(rx_block.cookie()).value());
  auto to_tx = std::move(n.b->import(tx_block.cookie()).value());
  auto rx = std::move(CookieReceiver::create(*n.b, rx_block, lay.ck_ring, slots).value());
  auto tx = std::make_unique<CookieSender>(tx_block.data() + lay.ck_sender);
  FUZZ_CHECK(tx->attach(to_rx, lay.ck_ring, slots) == Errc::kOk);
  FUZZ_CHECK(rx->attach(to_tx, lay.ck_sender, first) == Errc::kOk);
  // The hostile peer's own mappings of the same two places.
  auto ring = std::move(n.a->import(rx_block.cookie()).value());
  auto sender_words = std::move(n.b->import(tx_block.cookie()).value());
  const size_t ring_bytes = wire::ck_region_bytes(slots);
  const std::byte* base = nullptr;  // the ring's region, learnt from the first peek

  std::vector<Slot> model(slots);
  uint64_t pushed = first, next = first;
  uint64_t read_pointer = first;  // the word push() reads, as last written
  for (int step = 0; step < 256 && in.remaining_bytes() > 0; ++step) {
    switch (in.ConsumeIntegralInRange<int>(0, 5)) {
      case 0: {  // hostile: a word anywhere in the ring, often a tag
        const size_t at = in.ConsumeIntegralInRange<size_t>(0, ring_bytes / 8 - 1) * 8;
        const uint64_t v = in.ConsumeBool() ? next + in.ConsumeIntegralInRange<uint64_t>(0, slots + 1)
                                            : in.ConsumeIntegral<uint64_t>();
        (void)ring.write_word(lay.ck_ring + at, v);
        if (at >= wire::kCkRing) model[(at - wire::kCkRing) / wire::kCkSlot].dirty = true;
        break;
      }
      case 1: {  // hostile: the read pointer or the doorbell request
        const bool want = in.ConsumeBool();
        const uint64_t v = in.ConsumeBool() ? pushed - std::min<uint64_t>(pushed, in.ConsumeIntegral<uint8_t>())
                                            : in.ConsumeIntegral<uint64_t>();
        (void)sender_words.write_word(lay.ck_sender + (want ? wire::kCkWant : wire::kCkRead), v);
        if (!want) read_pointer = v;
        break;
      }
      case 2:
      case 3: {  // honest: push the next descriptor's message
        const auto msg = in.ConsumeBytes<uint8_t>(in.ConsumeIntegralInRange<size_t>(0, wire::kCkMessage));
        const Errc e = tx->push(pushed, msg.data(), msg.size());
        const bool room = read_pointer <= pushed && pushed - read_pointer < slots;
        FUZZ_CHECK(e == (room ? Errc::kOk : Errc::kCorrupt));
        if (e != Errc::kOk) break;
        Slot& s = model[pushed % slots];
        s.dirty = s.position != ~0ull && s.position >= next;  // a lie let it overwrite an unread one
        s.position = pushed++;
        s.message = msg;
        break;
      }
      default: {  // the reader looks, and takes what it finds
        const std::byte* m = rx->peek();
        const size_t slot_offset = wire::kCkRing + (next % slots) * wire::kCkSlot;
        const Slot& s = model[next % slots];
        if (!m) {
          FUZZ_CHECK(s.dirty || s.position != next);
          break;
        }
        if (!base) base = m - 8 - slot_offset;
        const std::byte* slot = base + slot_offset;
        FUZZ_CHECK(m == slot + 8);  // every message where its number puts it
        uint64_t tag;
        std::memcpy(&tag, slot, 8);
        FUZZ_CHECK(tag == next + 1);
        if (!s.dirty) {
          FUZZ_CHECK(s.position == next);
          FUZZ_CHECK(s.message.empty() || std::memcmp(m, s.message.data(), s.message.size()) == 0);
        }
        rx->consume();
        ++next;
        if (next % std::max<uint32_t>(slots / 8, 1) == 0) read_pointer = next;
        break;
      }
    }
  }
  return 0;
}
