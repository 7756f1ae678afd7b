// The receiving end of an unreliable datagram channel (see
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
// The frames come from one of two channels (datagram_sender.hpp): the DMQ
// ring, or a UdpChannel shared with the sender of the same link. The udp
// channel discards below this layer what its buffer truncated and what came
// from another address than the peer's; stats() counts those too.
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
namespace wire {
class UdpChannel;
}

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
  uint64_t truncated = 0;            // udp: longer than header + mtu, cut by the channel's buffer
  uint64_t foreign = 0;              // udp: from an address other than the peer's
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
  // The same over a udp channel (wire/udp_channel.hpp); frames of up to
  // header + mtu must fit its max_frame (kInvalidArgument).
  static Result<std::unique_ptr<DatagramReceiver>> create(
      std::shared_ptr<wire::UdpChannel> channel, const DatagramConfig& config);
  ~DatagramReceiver();
  DatagramReceiver(const DatagramReceiver&) = delete;
  DatagramReceiver& operator=(const DatagramReceiver&) = delete;

  // Over a DMQ only (kInvalidArgument over udp).
  RdmaCookie cookie() const { return dmq_ ? dmq_->cookie() : RdmaCookie{}; }
  Errc attach(const RdmaCookie& sender) {
    return dmq_ ? dmq_->attach(sender) : Errc::kInvalidArgument;
  }

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
  bool readable() const;
  Errc close();
  void abort(Errc reason);
  // The peer is gone in an orderly way (e.g. its connection closed): what it
  // wrote can still be drained, then receive() says kClosed; blocked calls wake.
  void peer_closed();
  // Directs the ring's tripwire into `queue` as `source` (nullptr: nowhere);
  // over udp, the channel's notifier thread (wire/udp_notifier.hpp).
  Errc notify_to(EventQueue* queue, uint32_t source);
  Errc status() const;

  DatagramReceiverStats stats() const;
  size_t mtu() const { return config_.mtu; }
  // The underlying DMQ receiver, for tests that play a hostile peer (DMQ only).
  const DmqReceiver& dmq() const { return *dmq_; }
  bool over_udp() const { return udp_ != nullptr; }

 private:
  explicit DatagramReceiver(const DatagramConfig& config) : config_(config) {}
  void count(dgram::FrameCheck c);
  void delivered(uint64_t sequence, size_t bytes);
  // The next frame of the channel, and giving its buffer back.
  Result<DmqMessage> next_frame(Deadline deadline);
  Errc release_frame();

  DatagramConfig config_;
  std::unique_ptr<DmqReceiver> dmq_;  // one of these two
  std::shared_ptr<wire::UdpChannel> udp_;
  bool pending_ = false;
  uint64_t expected_sequence_ = 0;
  std::vector<std::byte> copy_;  // receive_into's frame copy
  DatagramReceiverStats stats_;
};

}  // namespace clan
