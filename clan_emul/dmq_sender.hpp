// The sending end of a distributed message queue. It exports one word (the
// receiver's copy of read_i lands there) and imports the receiver's ring.
// Thread safety: one thread at a time.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

#include "clan_emul/aperture.hpp"
#include "clan_emul/deadline.hpp"
#include "clan_emul/dma_stream.hpp"
#include "clan_emul/dmq_layout.hpp"
#include "clan_emul/region.hpp"
#include "clan_emul/tripwire.hpp"

namespace clan {

class Endpoint;
class Nic;

class DmqSender {
 public:
  // With an endpoint, the read-pointer region and the aperture onto the
  // receiver's ring belong to it (see endpoint.hpp).
  static Result<std::unique_ptr<DmqSender>> create(Nic& nic, const DmqConfig& config,
                                                   const Endpoint* endpoint = nullptr);
  ~DmqSender();

  // The cookie the receiver needs (for its read_i updates).
  RdmaCookie cookie() const { return region_.cookie(); }
  // Imports the receiver's ring; it must have been created with the same config.
  Errc attach(const RdmaCookie& receiver);
  // Same, adopting the receiver's ring geometry (learnt in a handshake).
  Errc attach(const RdmaCookie& receiver, const DmqConfig& receiver_config);

  // Sends one message of up to max_message bytes, blocking while the ring is
  // full. kPio copies with the CPU; kDma queues the copy and the pointer
  // update on the DMA engine and returns when both have landed. The
  // receiver's read pointer (and its close) is looked at only when the space
  // known to be free runs short: a close is seen then (kClosed), and so is a
  // pointer that cannot be true (kCorrupt), which is never acted upon.
  Errc send(const void* data, size_t len, Deadline deadline, Transfer how = Transfer::kPio);
  // DMA without waiting: `data` must stay valid until dma().done(ticket).
  Result<uint64_t> send_dma_async(const void* data, size_t len, Deadline deadline);
  DmaStream& dma();

  // Bytes of ring space free now (as far as the sender knows).
  size_t space() const;
  // Orderly close: the receiver gets kClosed once it has drained the ring.
  Errc close();
  // Waits until everything sent so far has landed in the peer's ring
  // (Aperture::fence: at once on this host).
  Errc fence(Deadline deadline) const { return ring_.fence(deadline); }
  // Breaks the queue locally (e.g. the peer died): waiters wake with `reason`.
  void abort(Errc reason);
  Errc status() const { return status_.load(std::memory_order_acquire); }
  const DmqConfig& config() const { return config_; }

 private:
  DmqSender(Nic& nic, const DmqConfig& config) : nic_(nic), config_(config) {}
  // Room for `need` bytes: at once if the receiver's read position as last
  // seen leaves that much, else wait_for_space.
  Errc reserve(size_t need, Deadline deadline);
  Errc wait_for_space(size_t need, Deadline deadline);
  // A message's header and bytes at `at` of the receiver's ring.
  Errc write_message(size_t at, const void* data, size_t len, Deadline deadline);
  Errc fail(Errc e);

  Nic& nic_;
  const Endpoint* endpoint_ = nullptr;
  DmqConfig config_;
  Region region_;
  Tripwire space_tripwire_;
  Aperture ring_;
  std::unique_ptr<DmaStream> dma_;
  // Over the wire only: a message's header and bytes side by side, so that
  // they go as one write (one message on the wire, not two).
  std::vector<std::byte> staged_;
  uint64_t write_i_ = 0;
  // The receiver's read position as last read (and checked): the space up to
  // it stays free, since only our sends use it up. Looking at the word the
  // receiver writes only when that space runs short saves a cache-line
  // transfer between the cores on each send, and one more on each release
  // (the receiver's write finds the line still its own).
  uint64_t seen_read_ = 0;
  std::atomic<Errc> status_{Errc::kOk};
};

}  // namespace clan
