// VIPL transfer queue (via/transfer_queue.*): an honest TransferSender puts
// and publishes records into a TransferReceiver's ring while a hostile peer,
// through apertures, writes whatever the input says: words anywhere in the
// ring (tags, bodies, the write pointer), whole records with a good check
// word, and the read pointer the sender trusts.
// Contracts: peek() returns only a record whose tag is its position + 1,
// whose check word holds, with known flags and zero reserved words; a slot
// the hostile peer never touched gives exactly the record the sender put
// there once published, and nothing before; the sender's space() says
// kCorrupt exactly for a read pointer beyond what it wrote, and never lets
// it write more than a ring's worth ahead of the read pointer it saw.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstring>
#include <vector>

#include "clan_emul/aperture.hpp"
#include "fuzz/check.hpp"
#include "fuzz/nic_pair.hpp"
#include "via/transfer_queue.hpp"

using namespace via;
using clan::Errc;

namespace {

struct Slot {
  bool dirty = false;      // the hostile peer wrote here, or the sender overwrote an unread record
  bool rewritten = false;  // the sender put a record here since: its publication cleans the slot
  uint64_t position = ~0ull;  // the sender's record here
  wire::Record record{};
};

void spoil(Slot& s) {
  s.dirty = true;
  s.rewritten = false;
}

bool same(const wire::Record& a, const wire::Record& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const uint32_t slots = in.ConsumeIntegralInRange<uint32_t>(1, 16);
  auto& n = fuzz::nics();
  // Each side's channel block: the receiver's holds the ring, the sender's
  // the read pointer the receiver writes back.
  const wire::BlockLayout lay = wire::block_layout(8, slots);
  auto rx_block = std::move(n.b->export_region(lay.bytes).value());
  auto tx_block = std::move(n.a->export_region(lay.bytes).value());
  // The mappings outlive the ends that use them.
  auto to_rx = std::move(n.a->import(rx_block.cookie()).value());
  auto to_tx = std::move(n.b->import(tx_block.cookie()).value());
  auto rx = std::move(TransferReceiver::create(*n.b, rx_block, lay.tq_ring, slots).value());
  auto tx = std::make_unique<TransferSender>(tx_block.data() + lay.tq_sender);
  FUZZ_CHECK(tx->attach(to_rx, lay.tq_ring, slots) == Errc::kOk);
  FUZZ_CHECK(rx->attach(to_tx, lay.tq_sender) == Errc::kOk);
  // The hostile peer's own mappings of the same two places.
  auto ring = std::move(n.a->import(rx_block.cookie()).value());
  auto read_word = std::move(n.b->import(tx_block.cookie()).value());
  const size_t ring_bytes = wire::tq_region_bytes(slots);

  std::vector<Slot> model(slots);
  uint64_t written = 0, published = 0, read = 0;
  uint64_t read_pointer = 0;  // the word the sender reads, as last written
  bool broken = false;
  for (int step = 0; step < 256 && in.remaining_bytes() > 0; ++step) {
    switch (in.ConsumeIntegralInRange<int>(0, 7)) {
      case 0: {  // hostile: a word anywhere in the ring region
        const size_t at = in.ConsumeIntegralInRange<size_t>(0, ring_bytes / 8 - 1) * 8;
        (void)ring.write_word(lay.tq_ring + at, in.ConsumeBool() ? read + 1 : in.ConsumeIntegral<uint64_t>());
        if (at >= wire::kTqRing) spoil(model[(at - wire::kTqRing) / sizeof(wire::Record)]);
        break;
      }
      case 1: {  // hostile: a whole record that passes its check, for a slot near ours
        const uint64_t pos = read + in.ConsumeIntegralInRange<uint64_t>(0, slots);
        wire::Record r{};
        r.tag = pos + 1;
        r.desc_seq = in.ConsumeIntegral<uint64_t>();
        r.length = in.ConsumeIntegral<uint32_t>();
        r.immediate = in.ConsumeIntegral<uint32_t>();
        r.flags = in.ConsumeIntegralInRange<uint32_t>(0, 8);
        r.status = in.ConsumeIntegral<uint32_t>();
        r.check = wire::record_check(r);
        (void)ring.write(lay.tq_ring + wire::kTqRing + (pos % slots) * sizeof r, &r, sizeof r);
        spoil(model[pos % slots]);
        break;
      }
      case 2: {  // hostile: the read pointer the sender trusts
        read_pointer = in.ConsumeBool() ? written - std::min<uint64_t>(written, in.ConsumeIntegral<uint8_t>())
                                        : in.ConsumeIntegral<uint64_t>();
        (void)read_word.write_word(lay.tq_sender + wire::kTqRead, read_pointer);
        break;
      }
      case 3: {  // honest: put a record if there is room
        const Errc sp = tx->space();
        FUZZ_CHECK(sp == (read_pointer > written                ? Errc::kCorrupt
                          : written - read_pointer < slots ? Errc::kOk
                                                           : Errc::kWouldBlock));
        if (sp != Errc::kOk) break;
        wire::Record r{};
        r.desc_seq = written;
        r.length = in.ConsumeIntegral<uint32_t>();
        r.immediate = in.ConsumeIntegral<uint32_t>();
        r.flags = in.ConsumeIntegralInRange<uint32_t>(0, wire::kKnownFlags);
        FUZZ_CHECK(tx->put(r) == Errc::kOk);
        Slot& s = model[written % slots];
        if (s.position != ~0ull && s.position >= read) s.dirty = true;  // a lie let it overwrite
        s.rewritten = true;
        s.position = written;
        s.record = r;
        s.record.tag = written + 1;
        s.record.check = wire::record_check(s.record);
        ++written;
        break;
      }
      case 4:
        FUZZ_CHECK(tx->publish_pio() == Errc::kOk);
        for (; published < written; ++published) {
          Slot& s = model[published % slots];
          if (s.rewritten) s.dirty = s.rewritten = false;
        }
        break;
      default: {  // the receiver looks
        auto r = rx->peek();
        if (!r) {
          FUZZ_CHECK(r.error() == Errc::kCorrupt);
          FUZZ_CHECK(model[read % slots].dirty);
          broken = true;  // the VI would break here
          break;
        }
        const Slot& s = model[read % slots];
        if (!*r) {
          FUZZ_CHECK(s.dirty || !(s.position == read && read < published));
          break;
        }
        const wire::Record& got = **r;
        FUZZ_CHECK(got.tag == read + 1 && got.check == wire::record_check(got));
        FUZZ_CHECK((got.flags & ~wire::kKnownFlags) == 0);
        FUZZ_CHECK((got.reserved[0] | got.reserved[1] | got.reserved[2]) == 0);
        if (!s.dirty) FUZZ_CHECK(s.position == read && read < published && same(got, s.record));
        if (broken) break;
        rx->consume();
        ++read;
        if (read % std::max<uint32_t>(slots / 8, 1) == 0) read_pointer = read;
        break;
      }
    }
  }
  return 0;
}
