// The transfer queue (paper 001 sect. 3.3.1): per-message metadata from the
// sending VI to the receiving one: length, immediate data, errors. Records
// are written by PIO; each record's tag, then the write pointer, are
// published by PIO or, after DMA data, by DMA requests queued behind the
// data, so they land after the data. The reader polls the next record's tag:
// one cache line carries the news and the record. The write pointer is only
// a doorbell: writing it fires the tripwire that wakes a sleeping reader and
// posts to a completion queue. The reader never reads it (a line of its
// own, it would be a second miss before the record could be read), so a
// peer's garbage there wakes the reader and does nothing else.
// Thread safety: one thread at a time per end (the owning VI's lock).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "clan_emul/aperture.hpp"
#include "clan_emul/dma_stream.hpp"
#include "clan_emul/region.hpp"
#include "clan_emul/tripwire.hpp"
#include "via/wire.hpp"

namespace via {

class TransferSender {
 public:
  // `read_word`: where in this VI's channel block the reader writes its read
  // pointer (wire::kTqSenderBytes).
  explicit TransferSender(const std::byte* read_word) : read_word_(read_word) {}
  // The ring at `at` in the peer's block, mapped by `peer` (which must
  // outlive this object).
  clan::Errc attach(clan::Aperture& peer, size_t at, uint32_t slots);

  // kOk with room for one record; kWouldBlock when full; kCorrupt if the
  // reader's read pointer is impossible.
  clan::Errc space() const;
  // Writes the record for the next position, all but its tag (not yet
  // visible to the reader).
  clan::Errc put(wire::Record r);
  // Makes every record put so far visible: their tags, then the write pointer.
  clan::Errc publish_pio();
  // The same by DMA; the ticket of the last request. On kWouldBlock (the DMA
  // queue is full) the tags queued so far stay queued: call again.
  clan::Result<uint64_t> publish_dma(clan::DmaStream& dma);

 private:
  const std::byte* read_word_;
  clan::Aperture* ring_ = nullptr;
  size_t ring_at_ = 0;
  uint32_t slots_ = 0;
  uint64_t write_i_ = 0;      // records put
  uint64_t published_i_ = 0;  // records whose tag is written (or queued by DMA)
};

class TransferReceiver {
 public:
  // The ring at `at` in `block`, this VI's channel block (wire::tq_region_bytes(slots)).
  static clan::Result<std::unique_ptr<TransferReceiver>> create(clan::Nic& nic, const clan::Region& block,
                                                                 size_t at, uint32_t slots);
  uint32_t slots() const { return slots_; }
  // The sender's read pointer at `at` in the peer's block, mapped by `peer`
  // (which must outlive this object).
  clan::Errc attach(clan::Aperture& peer, size_t at);

  // The next record, checked; nullopt if none; kCorrupt if the peer wrote garbage.
  clan::Result<std::optional<wire::Record>> peek() const;
  // Consumes the record peek() returned and tells the sender.
  void consume();
  // The next record's tag is there.
  bool readable() const {
    const uint64_t read = read_i_.load(std::memory_order_relaxed);
    return tag_at(read) == read + 1;
  }
  clan::Tripwire& tripwire() { return tripwire_; }

 private:
  uint64_t tag_at(uint64_t position) const;
  const std::byte* ring_ = nullptr;  // in our block
  clan::Tripwire tripwire_;
  clan::Aperture* read_pointer_ = nullptr;
  size_t read_pointer_at_ = 0;
  uint32_t slots_ = 0;
  std::atomic<uint64_t> read_i_{0};  // written under the VI's lock, read by waiters
};

}  // namespace via
