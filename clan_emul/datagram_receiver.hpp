// The receiving end of an unreliable, in-order datagram channel (see
// datagram_layout.hpp for the frame, datagram_sender.hpp for the link).
// Every frame is validated before use: a frame shorter than its header,
// longer than header + MTU, failing its CRC, or whose length field disagrees
// with its size is discarded and counted, never delivered and never fatal.
// Nothing is retransmitted; sequence numbers feed statistics only.
//
// Two ways to receive:
//  - receive(): in place, zero copy; the Datagram points into the DMQ ring
//    and stays valid until release() (call it before the next receive).
//    The CRC vouches for the bytes as they were when checked: like every
//    in-place DMQ read, a hostile peer holding the ring's cookie could
//    rewrite them afterwards.
//  - receive_into(): copies the frame out of the ring first and validates the
//    copy, so what it returns is exactly what passed the CRC.
//
// A DMQ-level failure (the DMQ's own framing broken, kCorrupt) or the end of
// the stream (kClosed, once drained) is returned as the error.
// Thread safety: one thread at a time (stats() included).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "clan_emul/datagram_layout.hpp"
#include "clan_emul/deadline.hpp"
#include "clan_emul/dmq_receiver.hpp"
#include "clan_emul/error.hpp"

namespace clan {

class EventQueue;
class Nic;

struct Datagram {
  const std::byte* data;  // in the ring; valid until release()
  size_t size;
  uint64_t sequence;      // the sender's number, for statistics and tests
};

struct DatagramReceiverStats {
  uint64_t frames = 0;               // frames taken off the DMQ (good or bad)
  uint64_t delivered = 0;            // datagrams handed to the caller
  uint64_t discarded_corrupt = 0;    // CRC mismatch
  uint64_t discarded_malformed = 0;  // short, too long, or length field != size
  uint64_t missing = 0;              // gaps in the sequence numbers of delivered datagrams
  uint64_t bytes = 0;                // payload bytes delivered
  friend bool operator==(const DatagramReceiverStats&, const DatagramReceiverStats&) = default;
};

class DatagramReceiver {
 public:
  // With `queue`, the DMQ's tripwire also posts events there (value `user`).
  // With an endpoint, its regions and apertures are the endpoint's (see DmqReceiver).
  static Result<std::unique_ptr<DatagramReceiver>> create(Nic& nic, const DatagramConfig& config,
                                                          EventQueue* queue = nullptr,
                                                          uint64_t user = 0,
                                                          const Endpoint* endpoint = nullptr);
  ~DatagramReceiver();
  DatagramReceiver(const DatagramReceiver&) = delete;
  DatagramReceiver& operator=(const DatagramReceiver&) = delete;

  RdmaCookie cookie() const { return dmq_->cookie(); }
  Errc attach(const RdmaCookie& sender) { return dmq_->attach(sender); }

  // The next good datagram, in place, discarding bad frames on the way;
  // waits until the deadline (kTimeout). kInvalidArgument if the previous one
  // was not released.
  Result<Datagram> receive(Deadline deadline);
  Result<Datagram> try_receive() { return receive(Deadline::now()); }
  Errc release();

  // The next good datagram copied into `buf` (`cap` must be at least mtu(),
  // else kInvalidArgument); returns its size. `sequence` may be null.
  Result<size_t> receive_into(void* buf, size_t cap, Deadline deadline,
                              uint64_t* sequence = nullptr);

  // True if a frame (possibly one that will be discarded) or the close waits.
  bool readable() const { return dmq_->readable(); }
  Errc close() { return dmq_->close(); }
  void abort(Errc reason) { dmq_->abort(reason); }
  // The peer is gone in an orderly way (e.g. its connection closed): what it
  // wrote can still be drained, then receive() says kClosed; blocked calls wake.
  void peer_closed() { dmq_->peer_closed(); }
  // Directs the ring's tripwire into `queue` as `source` (nullptr: nowhere).
  void notify_to(EventQueue* queue, uint32_t source) { dmq_->notify_to(queue, source); }
  Errc status() const { return dmq_->status(); }

  const DatagramReceiverStats& stats() const { return stats_; }
  size_t mtu() const { return config_.mtu; }
  // The underlying DMQ receiver, for tests that play a hostile peer.
  const DmqReceiver& dmq() const { return *dmq_; }

 private:
  explicit DatagramReceiver(const DatagramConfig& config) : config_(config) {}
  void count(dgram::FrameCheck c);
  void delivered(uint64_t sequence, size_t bytes);

  DatagramConfig config_;
  std::unique_ptr<DmqReceiver> dmq_;
  bool pending_ = false;
  uint64_t expected_sequence_ = 0;
  std::vector<std::byte> copy_;  // receive_into's frame copy
  DatagramReceiverStats stats_;
};

}  // namespace clan
