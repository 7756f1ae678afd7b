// A two-way unreliable datagram connection with credit-based flow control
// (paper 003 sect. 3): a DatagramSender / DatagramReceiver pair in each
// direction, set up over the out-of-band connection manager exactly like
// DmqConnection and torn down with it. Peer death (OobState::kPeerDead)
// breaks both directions with kPeerDead and wakes every blocked caller;
// close() is orderly (the peer drains, then sees kClosed).
//
// Channel (Config::channel): the frames travel in a DMQ each way between two
// NICs of one host (the handshake carries each side's geometry, window and
// RDMA cookies), or over libfabric's udp provider to a peer on any host (the
// handshake carries each side's endpoint name; wire/udp_channel.hpp). The
// DMQ keeps order; UDP may reorder, and a data frame that arrives after a
// later one was taken is discarded and counted (Stats::reordered): paper 002
// sect. 3 lets the protocol treat reordering as loss. Over udp the mtu is at
// most kMaxUdpMtu, so that a frame fills one datagram.
//
// Faults: each side's DatagramLinkConfig::faults applies to every frame that
// side sends (data, credit acks and probes alike), so a test can make one
// direction lossy. Corrupt frames are discarded below (CRC), never delivered.
//
// Link frame = the payload of one datagram-channel frame (datagram_layout.hpp):
//   [0]  u32 type    kData / kAck / kProbe (distinct magic values)
//   [4]  u32 credit  kData: the low 32 bits of the sender's own `done` (see
//                    below), a piggybacked credit ack; kAck, kProbe: zero
//   [8]  u64 value   kData: the data sequence number (0, 1, 2, ... per
//                    direction, dropped datagrams included);
//                    kAck: the receiver's cumulative accounted count;
//                    kProbe: the sender's count of data datagrams sent
//   [16] payload     kData only, up to mtu() = config.mtu - 16
// Credit acks and probes travel in-band on the reverse direction and are
// never handed to the user.
//
// Credit design (window W = config.window per direction, 0 = no flow control;
// both ends must use the same W, mtu and ring size):
//  - The sender has sent_ (data sequence numbers issued) and acked_ (the
//    largest cumulative count received). It may send while sent_ - acked_ < W;
//    otherwise send() blocks, deadline-bounded, until credit arrives.
//  - The receiver accounts for a data sequence number once it is consumed by
//    the user, or known lost: a gap in the data sequence numbers (a missing
//    number that still comes, reordered, is discarded) or a number below a
//    probe's count (everything sent before the probe is in front of it, or
//    late and discarded). done = the first unaccounted number. The receiver sends ONE credit
//    ack carrying `done` each time done has advanced by ack_every through
//    consumption, and one ack in answer to every probe. ack_every = W is
//    paper 003's one ack restoring a whole window; the default is W / 2, so
//    that credit arrives before the sender has spent its window and the pipe
//    never drains.
//  - Every data frame also carries its sender's done (low 32 bits; honest
//    values lie within W of the credit already held, so they extend
//    unambiguously) and counts as an ack of it: in request-reply traffic the
//    next request or reply returns the credit, and standalone acks, frames of
//    their own that wake whoever watches the ring, are sent only when data
//    flows one way. A value at or below the credit held is ignored (acks and
//    data frames leave under different locks, so they may overtake each
//    other); one above the count of datagrams sent breaks the link (kCorrupt).
//  - Acks are cumulative, so a lost ack is repaired by any later one. A lost
//    tail datagram, a lost ack or a lost probe would stall the sender: a
//    sender stalled for probe_after sends a probe (its sent_ count), then
//    again with exponential backoff up to probe_max, until credit arrives;
//    the receiver answers each probe with its current done. Hence no
//    deadlock on any pattern of losses, as long as the receiving side is
//    inside a link call (send, receive, readable, flush) now and then: the
//    link has no thread of its own, whoever waits on the link reads the
//    receive ring for everyone ("pumps": data to a local queue, acks to the
//    credit state, probes answered).
//  - Ring bound: the receiver rejects (kCorrupt, the link breaks) a data
//    sequence number >= done + W, which an honest sender never sends. So the
//    receive ring plus the local queue never hold more than W data frames,
//    and the ring is checked at connect to hold W maximal data frames plus
//    kControlReserve control frames (kInvalidArgument otherwise); over udp
//    as many receive buffers are posted. Control frames are sent without waiting (Deadline::now()): if the ring had no
//    room, the frame counts as lost. Stats::ring_full_stalls counts data sends
//    that found the peer's ring full (with flow control on: never).
//  - Without flow control (W = 0) nothing of this runs: the DMQ ring's own
//    back-pressure is all there is (over udp, none: what the receiver's
//    socket cannot hold is lost).
//
// Blocking: send() blocks only for credit (and, without flow control, for
// ring space); receive() until a datagram, the close, or the deadline.
// Thread safety: one thread may send while another receives (each of send(),
// receive(), flush() serialises its own callers); readable(), stats(),
// close() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "clan_emul/datagram_layout.hpp"
#include "clan_emul/datagram_receiver.hpp"
#include "clan_emul/datagram_sender.hpp"
#include "clan_emul/deadline.hpp"
#include "clan_emul/endpoint.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/oob_connection.hpp"

namespace clan {

class EventQueue;
class Nic;
class OobManager;
class OobRequest;

namespace wire {
class UdpChannel;
}

// What a link's frames travel over: the shared-memory DMQ of one host, or
// libfabric's udp provider (wire/udp_channel.hpp), which reaches a peer on
// another host. Both ends must choose the same.
enum class DatagramChannel : uint8_t { kSharedMemory, kUdp };

constexpr const char* to_string(DatagramChannel c) {
  return c == DatagramChannel::kUdp ? "udp" : "shared memory";
}

// DatagramConfig (mtu, ring_bytes, faults, delay line) plus flow control and
// the channel. A plain DatagramConfig converts implicitly (window
// kDefaultWindow, shared memory).
struct DatagramLinkConfig : DatagramConfig {
  static constexpr size_t kDefaultWindow = 16;  // fits the default 256 KiB ring at mtu 9180
  size_t window = kDefaultWindow;  // credits per direction; 0 = no flow control
  size_t ack_every = 0;            // consumed datagrams per credit ack; 0 = window / 2
  // Stall before the first probe. A lost tail datagram together with a lost
  // ack stalls a sender until then: a few wake-ups long, not a millisecond
  // (at 1 ms, 1 % loss, window 8, bench_window counted probes for about a
  // third of its time). A needless probe costs two frames.
  std::chrono::microseconds probe_after{100};
  std::chrono::microseconds probe_max{64000};   // backoff ceiling between probes
  DatagramChannel channel = DatagramChannel::kSharedMemory;
  // udp only: the numeric local address to bind (the peer sends there; it
  // learns it in the handshake) and the port (0: any free one). The mtu
  // must leave the frame within one UDP datagram: at most kMaxUdpMtu.
  std::string udp_address = "127.0.0.1";
  uint16_t udp_port = 0;

  DatagramLinkConfig() = default;
  DatagramLinkConfig(const DatagramConfig& c, size_t w = kDefaultWindow)  // NOLINT: implicit
      : DatagramConfig(c), window(w) {}
};

struct DatagramLinkStats {
  DatagramSenderStats sender;      // every frame this side sent: data, acks, probes
  DatagramReceiverStats receiver;  // every frame taken off this side's ring
  uint64_t data_sent = 0;          // data datagrams accepted by send()
  uint64_t data_bytes_sent = 0;
  uint64_t data_received = 0;      // data datagrams handed to the user
  uint64_t data_bytes_received = 0;
  uint64_t data_lost = 0;          // data datagrams accounted as lost (gaps, probes)
  uint64_t credit_stalls = 0;      // send()/flush() calls that had to wait for credit
  uint64_t credit_acks_sent = 0;
  uint64_t credit_acks_received = 0;
  uint64_t credit_acks_lost = 0;   // of ours: dropped or corrupted by our fault model, or no room
  uint64_t credit_piggybacked_sent = 0;      // data datagrams that carried new credit for the peer
  uint64_t credit_piggybacked_received = 0;  // data datagrams whose credit moved ours on
  uint64_t probes_sent = 0;
  uint64_t probes_received = 0;
  uint64_t probes_lost = 0;        // of ours, as for acks
  uint64_t ring_full_stalls = 0;   // data sends that found the peer's ring (or delay line) full
  uint64_t malformed = 0;          // good-CRC frames with an unknown type or bad size, discarded
  uint64_t reordered = 0;          // data frames numbered below the next expected (late), discarded
  uint64_t max_queued = 0;         // most data datagrams ever held in the local queue
};

class DatagramLink {
 public:
  using Config = DatagramLinkConfig;
  using Stats = DatagramLinkStats;

  // Link header bytes inside each channel frame, and the control frames the
  // ring must hold on top of W data frames.
  static constexpr size_t kLinkHeader = 16;
  static constexpr size_t kControlReserve = 64;
  // The largest config.mtu over udp: a frame (its 16-byte header and mtu
  // bytes) fills at most one 1472-byte UDP datagram; mtu() is 16 less.
  static constexpr size_t kMaxUdpMtu = 1472 - dgram::kFrameHeader;

  // Ring bytes W maximal data frames plus the control reserve take (what
  // connect() checks config.ring_bytes against; 0 for window 0).
  static size_t ring_bytes_needed(const Config& config);

  // Connects to a listener on `node`:`port`. With `events`, the receive
  // ring's tripwire posts there (value `user`), and so does the link when
  // another thread's send() moved a datagram into the local queue.
  // kInvalidArgument: bad config or a ring too small for the window.
  // The link is an endpoint of its own, as a DmqConnection is: its rings are
  // resident while it holds one of the NIC's frames.
  static Result<std::unique_ptr<DatagramLink>> connect(Nic& nic, OobManager& oob,
                                                       const std::string& node, uint16_t port,
                                                       const Config& config, Deadline deadline,
                                                       EventQueue* events = nullptr,
                                                       uint64_t user = 0);
  // Accepts a pending request. A malformed hello is rejected with kCorrupt; a
  // well-formed one whose mtu, ring or window differ from ours with
  // kInvalidArgument (the requester sees kRefused either way).
  static Result<std::unique_ptr<DatagramLink>> accept(Nic& nic, OobRequest& request,
                                                      const Config& config,
                                                      EventQueue* events = nullptr,
                                                      uint64_t user = 0);
  // The channel a pending request's hello asks for, so that a listener can
  // accept with a config of that channel; kSharedMemory for a blob that is
  // no udp hello (accept() then judges it).
  static DatagramChannel requested_channel(const OobRequest& request);
  ~DatagramLink();
  DatagramLink(const DatagramLink&) = delete;
  DatagramLink& operator=(const DatagramLink&) = delete;

  // One datagram of up to mtu() bytes. kOk means accepted by the link, not
  // delivered (the fault model may drop or corrupt it). Blocks only for flow
  // control (kTimeout: not sent). kClosed, kPeerDead, kCorrupt.
  Errc send(const void* data, size_t len, Deadline deadline);
  // The next good datagram copied into `buf` (`cap` >= mtu(), else
  // kInvalidArgument); its size. `sequence` (optional) gets its data
  // sequence number: strictly increasing, gaps where datagrams were lost.
  // kTimeout; kClosed once the peer closed and everything was drained;
  // kPeerDead at once when the peer died.
  Result<size_t> receive(void* buf, size_t cap, Deadline deadline, uint64_t* sequence = nullptr);
  // receive() without waiting, also not for another receiver: kWouldBlock
  // while one is in receive() (it takes what arrives), kTimeout if nothing
  // is there.
  Result<size_t> try_receive(void* buf, size_t cap);
  // A datagram (or the close, or an error) is waiting. Services control
  // frames already in the ring (answers probes) on the way.
  bool readable() const;
  // Something has arrived that nobody has taken yet (in the ring or the
  // local queue), looked at without reading the ring: true also while
  // another thread is about to (a reader woken but not yet running).
  bool unread() const;
  // Directs the link's wake-ups into `queue` as `source` (nullptr: nowhere),
  // replacing connect()'s `events`: the receive ring's tripwire (any frame,
  // credit traffic included: events are hints) and the link itself when
  // another thread's send() moved a datagram into the local queue or the
  // connection went down. Over udp, the channel's notifier thread posts
  // for every arrival in place of the tripwire (wire/udp_notifier.hpp). The
  // queue must outlive the link or be replaced.
  void notify_to(EventQueue* queue, uint32_t source);
  // Waits until every datagram sent so far is accounted for by the receiver
  // (consumed or known lost), probing as needed. kOk at once without flow control.
  Errc flush(Deadline deadline);
  size_t mtu() const { return config_.mtu - kLinkHeader; }
  size_t window() const { return config_.window; }
  // Orderly: the peer drains what was sent, then sees kClosed; our later
  // sends return kClosed, our receives drain what arrived, then kClosed.
  Errc close();
  // The sending side's fault model (ours: applied to what we send).
  const FaultModel& faults() const { return config_.faults; }
  Stats stats() const;
  OobConnection& oob() { return *oob_; }

 private:
  struct Direct;  // receive()'s buffer, for a datagram delivered straight from the ring
  struct Queued {
    uint64_t sequence;
    std::vector<std::byte> bytes;
  };

  explicit DatagramLink(const Config& config) : config_(config) {}
  // Set-up (datagram_link.cpp), and the link's state under rx_mu_.
  static Result<std::unique_ptr<DatagramLink>> make(Nic& nic, const Config& config,
                                                    EventQueue* events, uint64_t user);
  static Errc check_config(const Config& config);
  // The two directions over the chosen channel (datagram_link_channel.cpp).
  Errc open_shared_memory(Nic& nic, EventQueue* events, uint64_t user);
  Errc open_udp(Nic& nic);
  // The handshake blob, ours and the peer's (datagram_link_hello.cpp).
  std::vector<std::byte> hello() const;
  Errc attach(const std::vector<std::byte>& peer_hello);
  Errc attach_udp(const std::vector<std::byte>& peer_hello);
  void watch();
  // The first fatal error sticks; under rx_mu_.
  Errc fail_locked(Errc e) {
    if (status_ == Errc::kOk) status_ = e;
    return status_;
  }
  Errc send_status_locked() const { return status_ != Errc::kOk ? status_ : tx_end_; }
  // The first data sequence number not yet accounted for; under rx_mu_.
  uint64_t done_locked() const { return queue_.empty() ? next_expected_ : queue_.front().sequence; }

  // The data path (datagram_link_io.cpp).
  bool poll_readable();
  // receive() with recv_mu_ held.
  Result<size_t> receive_locked(void* buf, Deadline deadline, uint64_t* sequence);
  void pump(std::unique_lock<std::mutex>& lk, Deadline deadline, Direct* direct);
  void process(const Datagram& d, Direct* direct);
  void process_data(uint64_t seq, uint32_t credit, const std::byte* payload, size_t len,
                    Direct* direct);
  void process_ack(uint64_t value);
  void process_probe(uint64_t count);
  // Posts the link's own wake-up to its event queue, if any; under rx_mu_.
  void notify_locked();

  // Credit flow control (datagram_link_credit.cpp).
  Errc wait_credit(std::unique_lock<std::mutex>& lk, uint64_t need_acked, Deadline deadline);
  void consumed_locked();
  // A data frame's piggybacked credit (low 32 bits of the peer's done):
  // false if it claims datagrams never sent.
  bool take_credit_locked(uint32_t credit);
  void queue_ack_locked();
  void flush_control();
  void send_control(uint32_t type, uint64_t value);

  Config config_;
  size_t ack_every_ = 0;
  // Before the rings: released after their regions and apertures.
  Endpoint endpoint_;
  std::unique_ptr<DatagramSender> tx_;
  std::unique_ptr<DatagramReceiver> rx_;
  std::shared_ptr<wire::UdpChannel> udp_;  // over udp: the channel tx_ and rx_ share
  EventQueue* own_events_ = nullptr;  // connect()'s queue, with a source we added
  uint32_t own_source_ = 0;

  std::mutex send_mu_;  // one send()/flush() at a time
  std::mutex recv_mu_;  // one receive() at a time
  std::mutex tx_mu_;    // frames into tx_ (data and control); rx_mu_ -> tx_mu_ only by try_lock
  std::atomic<uint64_t> sent_{0};    // data sequence numbers issued; written under send_mu_
  std::atomic<uint64_t> pending_ack_{0};  // value + 1 of an ack to send; 0 = none

  mutable std::mutex rx_mu_;  // guards everything below
  std::condition_variable cv_;
  bool pumping_ = false;          // a thread is reading rx_ outside the lock
  Errc status_ = Errc::kOk;       // fatal: kPeerDead, kCorrupt, ...
  Errc tx_end_ = Errc::kOk;       // kClosed: no more sends
  Errc rx_end_ = Errc::kOk;       // kClosed: the ring is drained and closed
  uint64_t acked_ = 0;            // sender: cumulative count from the peer
  uint64_t next_expected_ = 0;    // receiver: highest data sequence seen + 1
  uint64_t last_ack_ = 0;         // receiver: the last cumulative count acked
  std::deque<Queued> queue_;      // receiver: data pulled off the ring, not consumed
  std::vector<std::vector<std::byte>> spare_;
  EventQueue* events_ = nullptr;  // where the link's own wake-ups go
  uint32_t event_source_ = 0;
  DatagramReceiverStats rx_stats_;
  uint64_t data_received_ = 0, data_bytes_received_ = 0, data_lost_ = 0, max_queued_ = 0;
  uint64_t acks_received_ = 0, probes_received_ = 0, malformed_ = 0, credit_piggybacked_ = 0,
      credit_piggybacks_sent_ = 0, reordered_ = 0;
  std::atomic<uint64_t> credit_stalls_{0}, acks_sent_{0}, acks_lost_{0}, probes_sent_{0},
      probes_lost_{0}, ring_full_stalls_{0}, data_bytes_sent_{0};

  std::shared_ptr<OobConnection> oob_;  // last: destroyed first (see the destructor)
};

}  // namespace clan
