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
  // visible to the reader). kTimeout if the reader's endpoint stayed on the
  // host past `hold` (paper 004 sect. 3.2): nothing written, nothing put.
  clan::Errc put(wire::Record r, clan::Deadline hold = clan::Deadline::never());
  // Records put, for rewind().
  uint64_t mark() const { return write_i_; }
  // Forgets the records put since `mark` (none of them published): a send
  // held part way is put again from the start when it is retried.
  void rewind(uint64_t mark) {
    if (mark >= published_i_ && mark <= write_i_) write_i_ = mark;
  }
  // Makes every record put so far visible: their tags, then the write
  // pointer. On kTimeout (the reader's endpoint is on the host) the records
  // whose tag is written are visible and the rest are owed: call again.
  clan::Errc publish_pio(clan::Deadline hold = clan::Deadline::never());
  // Tags or the write pointer are owed after a publish_pio that timed out.
  bool owed() const { return published_i_ != write_i_ || pointer_owed_; }
  // Records whose tag is written (or queued by DMA), for mark().
  uint64_t published() const { return published_i_; }
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
  bool pointer_owed_ = false;  // the write pointer's last write timed out
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
  // Consumes the record peek() returned and tells the sender (lazily: a read
  // pointer that finds the sender's endpoint on the host is owed instead).
  void consume();
  // Writes an owed read pointer, waiting up to `hold` for the sender's
  // endpoint; true if none is owed any more.
  bool flush(clan::Deadline hold);
  bool owed() const { return owed_; }
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
  bool owed_ = false;                // the read pointer's last write timed out
};

}  // namespace via
