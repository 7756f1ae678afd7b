// The sending end of an unreliable datagram channel (see
// datagram_layout.hpp for the frame). It is the emulated link: the seeded
// FaultModel of its config drops or corrupts datagrams here, deterministically
// per seed and datagram index, and an optional fixed delay holds frames back.
// The layer never retransmits; the receiver discards what fails its CRC.
//
// The frames travel over one of two channels: a DMQ into the receiver's
// ring (peers on one host), or a UdpChannel (wire/udp_channel.hpp: libfabric's
// udp provider, for a peer on another host), which the sender shares with the
// receiver of the same link. The fault model and the delay line apply to
// both alike, above the channel.
//
// Blocking: send() blocks while the DMQ ring (the udp socket) is full (or, with a delay, while
// the delay line is full), up to its deadline. Flow control proper is the
// business of the layer above (omniTransport's credits), not of this one.
//
// Delay: with faults.delay > 0 each accepted frame is stamped due = now +
// delay and appended to a FIFO; one link thread per sender (not per frame)
// sleeps on a condition variable until the head is due (or new work arrives)
// and writes frames into the DMQ in FIFO order, so the order never changes
// and a frame never leaves before it is due. Without a delay there is no
// thread: send() writes the frame into the DMQ itself.
//
// Thread safety: send(), attach() and close() from one thread at a time;
// stats(), spoiled(), status() and abort() from any thread. Without a delay
// send() takes no lock: each counter has a single writer (send(), or for
// `delivered` with a delay the link thread) and is read as an atomic.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "clan_emul/datagram_layout.hpp"
#include "clan_emul/deadline.hpp"
#include "clan_emul/dmq_sender.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/fault_model.hpp"

namespace clan {

class Nic;
namespace wire {
class UdpChannel;
}

struct DatagramSenderStats {
  uint64_t sent = 0;         // datagrams accepted by send() (each got a sequence number)
  uint64_t dropped = 0;      // of those, dropped by the fault model
  uint64_t corrupted = 0;    // of those, corrupted by the fault model (one byte flipped)
  uint64_t delivered = 0;    // frames written into the DMQ (corrupted ones included)
  uint64_t bytes = 0;        // payload bytes of the accepted datagrams
  uint64_t held = 0;         // frames waiting in the delay line now
  friend bool operator==(const DatagramSenderStats&, const DatagramSenderStats&) = default;
};

class DatagramSender {
 public:
  // kInvalidArgument for an invalid config (see dgram::valid).
  // With an endpoint, its regions and apertures are the endpoint's (see DmqSender).
  static Result<std::unique_ptr<DatagramSender>> create(Nic& nic, const DatagramConfig& config,
                                                        const Endpoint* endpoint = nullptr);
  // The same over a udp channel (connected to the peer, or to be): frames of
  // up to header + mtu must fit the channel's max_frame (kInvalidArgument).
  static Result<std::unique_ptr<DatagramSender>> create(std::shared_ptr<wire::UdpChannel> channel,
                                                        const DatagramConfig& config);
  // Stops the link thread; frames still held are lost (close() first to flush).
  ~DatagramSender();
  DatagramSender(const DatagramSender&) = delete;
  DatagramSender& operator=(const DatagramSender&) = delete;

  // Over a DMQ only (kInvalidArgument over udp).
  RdmaCookie cookie() const { return dmq_ ? dmq_->cookie() : RdmaCookie{}; }
  Errc attach(const RdmaCookie& receiver) {
    return dmq_ ? dmq_->attach(receiver) : Errc::kInvalidArgument;
  }

  // Sends one datagram of up to mtu() bytes (kInvalidArgument beyond). kOk
  // means the link accepted it, not that it will arrive: a dropped datagram
  // returns kOk too. kTimeout means it was not accepted (no sequence number
  // consumed, the fault decision is kept for the next datagram). With a
  // delay, a DMQ failure in the link thread is reported by the next call.
  // kPio / kDma choose how the frame is copied into the peer's ring.
  Errc send(const void* data, size_t len, Deadline deadline, Transfer how = Transfer::kPio);
  // The same for a datagram gathered from two pieces (head, then data): no
  // copy to join them first. head_len + len <= mtu().
  Errc send(const void* head, size_t head_len, const void* data, size_t len, Deadline deadline,
            Transfer how = Transfer::kPio);

  // Waits until held frames have gone out (kTimeout if not by the deadline;
  // the channel then stays open), then closes the DMQ: the receiver gets
  // kClosed once it has drained the ring. Later sends return kClosed.
  Errc close(Deadline deadline = Deadline::never());
  // Breaks the channel locally (e.g. the peer died); blocked calls wake.
  void abort(Errc reason);
  Errc status() const;

  DatagramSenderStats stats() const;
  // Datagrams the fault model dropped or corrupted so far (stats().dropped +
  // corrupted, without the lock): compared around a send, says whether that
  // datagram was spoiled.
  uint64_t spoiled() const;
  size_t mtu() const { return config_.mtu; }
  const DatagramConfig& config() const { return config_; }

 private:
  struct Held {
    Clock::time_point due;
    std::vector<std::byte> frame;
    Transfer how;
  };

  explicit DatagramSender(const DatagramConfig& config) : config_(config), faults_(config.faults) {}
  Errc send_now(const void* head, size_t head_len, const void* data, size_t len, Deadline deadline,
                Transfer how);
  Errc send_delayed(const void* head, size_t head_len, const void* data, size_t len,
                    Deadline deadline, Transfer how);
  Errc transmit(const std::byte* frame, size_t len, Deadline deadline, Transfer how);
  void start();  // after the channel is set: the link thread or the scratch frame
  // The channel's own state, and its abort and close (DMQ or udp).
  Errc channel_status() const;
  void channel_abort(Errc reason);
  void link_loop();
  void stop_link();
  Errc fail_locked(Errc e);

  DatagramConfig config_;
  std::unique_ptr<DmqSender> dmq_;                // one of these two
  std::shared_ptr<wire::UdpChannel> udp_;
  FaultInjector faults_;
  std::optional<FaultDecision> pending_decision_;  // decided but not accepted (kTimeout)
  uint64_t next_sequence_ = 0;
  std::vector<std::byte> scratch_;  // frame under construction (no delay)

  std::atomic<Errc> status_{Errc::kOk};  // written under mu_ (first error wins), read anywhere
  std::atomic<uint64_t> sent_{0}, dropped_{0}, corrupted_{0}, delivered_{0}, bytes_{0};

  mutable std::mutex mu_;  // guards everything below
  std::condition_variable link_cv_;   // link thread: work arrived, or stop
  std::condition_variable owner_cv_;  // send()/close(): room in the delay line, drained
  std::deque<Held> held_;
  std::vector<std::vector<std::byte>> spare_;  // recycled frame buffers
  size_t held_bytes_ = 0;  // includes the frame the link thread is writing
  bool in_flight_ = false;
  bool stop_ = false;
  std::thread link_;
};

}  // namespace clan
