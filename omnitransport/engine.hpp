// The omniTransport protocol engine (paper 002 sect. 3-4): the client and
// server state machines for exactly-once and one-way calls, the error
// handling of sect. 4.2, RECLAIM (4.3) and fragmentation (4.4), in one class
// used on both sides. No I/O and no clock: packets and time come in as
// arguments (now_ns, any monotonic origin), packets to transmit and data for
// the strand are queued and drained by the driver, and next_timer() says when
// on_timer() is due. See DESIGN.md for the transition tables.
//
// Threading: not thread-safe. The driver serialises every call (one strand
// per connection; the driver's timer thread must take the same lock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "omnitransport/error.hpp"
#include "omnitransport/filter.hpp"
#include "omnitransport/header.hpp"
#include "omnitransport/rto_estimator.hpp"
#include "omnitransport/state.hpp"

namespace otp {

struct EngineConfig {
  size_t mtu = 9180;                     // max packet incl. header; clamped to [kHeaderSize+1, kMaxPacketSize]
  // Retransmission timeout. The server's is this; the client's adapts to
  // the round trips of its calls (rto_estimator.hpp) and this is its floor,
  // so a client whose calls come back quickly repairs a loss one rto after it.
  uint64_t rto_ns = 2'000'000;
  // Backoff ceiling, and the client's adapted RTO's. Consecutive timeouts
  // without progress come after rto, rto, 2 rto, 4 rto ... up to this (at
  // least rto_ns); progress brings the interval back to rto. A peer that is
  // slow rather than lossy (unscheduled on a busy host) draws a few NACKs or
  // resent replies, not one per rto, each taking link credit and CPU from
  // the peer it waits for.
  uint64_t rto_max_ns = 32'000'000;
  uint64_t ack_delay_ns = 10'000'000;    // client idle ack timer
  size_t pool_buffers = 64;              // unacked buffers a side may hold before it must RECLAIM; clamped to [1, 127]
  int max_retries = 50;                  // consecutive timeouts/no-progress rounds before zombie (kBad)
};

// The interval before the next timeout after `timeouts` consecutive ones
// without progress: rto, rto, 2 rto, 4 rto ... up to rto_max_ns. With
// `rto_ns`, from that RTO (the client's adapted one) instead of config's.
uint64_t backoff_interval(const EngineConfig& config, uint32_t timeouts);
uint64_t backoff_interval(const EngineConfig& config, uint64_t rto_ns, uint32_t timeouts);
// How many consecutive timeouts, with the backoff, take at least `ns`: for a
// max_retries that gives up on a silent peer after about that long.
int retries_lasting(const EngineConfig& config, uint64_t ns);

struct Stats {
  uint64_t packets_sent = 0;           // every datagram queued for transmission (data + control + retransmissions)
  uint64_t packets_retransmitted = 0;  // data packets sent again
  uint64_t packets_received = 0;       // well-formed datagrams
  uint64_t packets_malformed = 0;      // rejected by decode()
  uint64_t duplicates = 0;             // repeated data (filter kRepeated)
  uint64_t out_of_sequence = 0;        // data beyond a gap (filter kOutOfSequence)
  uint64_t stray = 0;                  // well-formed but irrelevant (stale control, impossible calls)
  uint64_t nacks_sent = 0;
  uint64_t nacks_received = 0;
  uint64_t call_acks_sent = 0;
  uint64_t call_acks_received = 0;
  uint64_t reclaims_sent = 0;          // RECLAIM, including resends
  uint64_t reclaim_acks_sent = 0;
  uint64_t reclaim_acks_received = 0;
  uint64_t timeouts = 0;               // retransmission timer expiries
  uint64_t calls = 0;                  // client: calls started; server: calls whose first packet was delivered
  uint64_t oneways_aborted = 0;        // server: ABORT delivered for a partially delivered one-way
  uint64_t oneways_ignored = 0;        // server: one-ways dropped because their start was lost (case vii)
  uint64_t deliveries = 0;             // Received items queued for the strand
  uint64_t buffers_held = 0;           // now: exactly-once packets held unacked + waiting for pool space
};

// Where an engine with a sink transmits: synchronously, from inside the call
// that produced the packet (send, on_packet, on_timer, ...). `packet` is
// header + payload and valid only during the call; it may point into a
// buffer the caller lent to send_in_place(). Without a sink, packets queue
// for next_packet().
class PacketSink {
 public:
  virtual void transmit(const std::byte* packet, size_t len) = 0;

 protected:
  ~PacketSink() = default;
};

// send_in_place(): what the engine keeps of an exactly-once chunk it must be
// able to retransmit.
enum class Retain : uint8_t {
  kCopy,    // the buffer is valid only during the call: after transmitting
            // from it, the engine keeps a copy of each packet (and copies
            // whatever the pool could not take yet)
  kBorrow,  // the caller keeps the buffer valid and unchanged until the
            // engine lets go of it (borrowed() == false): retransmissions
            // are made from it, in place, too
};

class Engine {
 public:
  Engine(Role role, EngineConfig config = {});

  // Strand -> transport: one GIOP chunk. complete=false: PARTIAL (more of
  // this message follows). exactly_once=false: a one-way (at-most-once).
  // Client: starts a call from kIdle, continues it from k*InProgress; the
  // kind of a call is fixed by its first chunk (a mismatch is kWrongState).
  // Server: only in kReplying (the reply to an exactly-once request; the flag
  // is ignored, replies are always held for retransmission).
  // Fragments to the MTU; exactly-once packets beyond pool_buffers wait and a
  // RECLAIM is sent. Errors: kZombie, kWrongState.
  Errc send(const void* data, size_t len, bool complete, bool exactly_once, uint64_t now_ns);

  // The copy-out trick (paper 002 sect. 4.4, Fig. 9): sends a chunk that has
  // no room for a header in front of it without copying it. The first
  // kHeaderSize bytes are copied out into a small packet of their own; every
  // further packet is sent in place: the kHeaderSize bytes in front of its
  // payload (already sent) are saved, the header is written over them, the
  // packet goes to the sink, and the bytes are restored. On return `data`
  // holds exactly what it held on entry. All packets of the chunk are marked
  // fragmented. Same states, errors and sequence numbers as send(); a chunk
  // of kHeaderSize bytes or less, or an engine without a sink, takes the
  // copying path of send().
  Errc send_in_place(std::byte* data, size_t len, bool complete, bool exactly_once, Retain retain,
                     uint64_t now_ns);

  // nullptr (the default): packets queue for next_packet(). Set it while
  // nothing is queued, or the queued packets would come out after newer ones.
  void set_sink(PacketSink* sink) { sink_ = sink; }

  // Some held or waiting packet still lives in a buffer lent with Retain::kBorrow.
  bool borrowed() const;

  // Gives a spent buffer (e.g. a Received::data the driver consumed) back
  // for reuse, so that steady traffic allocates nothing.
  void recycle(std::vector<std::byte>&& bytes);

  // One raw datagram from the link. Malformed ones are counted and dropped.
  void on_packet(const std::byte* data, size_t len, uint64_t now_ns);

  // Call when now_ns >= *next_timer() (calling early is harmless).
  void on_timer(uint64_t now_ns);

  // Explicit reclaim (sect. 4.3): RECLAIM for the held buffers, if any.
  Errc reclaim(uint64_t now_ns);

  // Hard error reported by the layer below (sect. 4.2.1 iii): kBad, zombie.
  void fail(uint64_t now_ns);
  // Local orderly shutdown: kEof to the strand, zombie.
  void close(uint64_t now_ns);

  struct Packet {
    std::vector<std::byte> bytes;  // header + payload, ready for the link
  };
  bool next_packet(Packet& out);  // to transmit, in order; out's old buffer is reused

  struct Received {
    Delivery what = Delivery::kData;
    std::vector<std::byte> data;  // kData: one packet's payload
    bool complete = false;        // kData: last buffer of the request/reply
    bool exactly_once = false;    // kData: the call's semantics (server: false = one-way, no reply)
  };
  bool next_received(Received& out);  // data/events for the strand, in order; out's old buffer is reused

  std::optional<uint64_t> next_timer() const;  // absolute ns when on_timer is due
  // When recovery traffic is due if a packet was lost (a hint for a driver
  // that would rather not be asleep then, no protocol state): client, its
  // retransmission timer while it waits for a reply (it NACKs then); server,
  // rto after it completed a reply still held, which is when a client that
  // lost the reply, or whose next request was lost, NACKs. nullopt otherwise.
  std::optional<uint64_t> recovery_due() const;
  State state() const { return state_; }
  Role role() const { return role_; }
  // The retransmission timeout a call started now would wait: the client's
  // adapted one (at least config().rto_ns); the server's is config's.
  uint64_t rto_ns() const { return rto_.rto_ns(); }
  Stats stats() const;
  const EngineConfig& config() const { return cfg_; }
  size_t max_payload() const { return cfg_.mtu - kHeaderSize; }

 private:
  struct Buf {
    uint8_t call = 0;
    uint8_t pkt = 0;
    // Header + payload; or, for a packet in a lent buffer, the header alone
    // and the payload at `lent` (kHeaderSize writable bytes before it belong
    // to the same buffer).
    std::vector<std::byte> bytes;
    std::byte* lent = nullptr;
    size_t lent_len = 0;
    bool copy_after_send = false;  // Retain::kCopy: own a copy once transmitted
  };

  // Transmission (engine.cpp).
  void emit(const std::byte* p, size_t n);
  void transmit(Buf& b);
  void transmit_in_place(const std::byte* header, std::byte* payload, size_t n);
  void own(Buf& b);
  std::vector<std::byte> take_spare();
  void send_control(PacketType t, uint8_t call, uint8_t pkt);
  void pump(uint64_t now);
  void start_reclaim(uint64_t now);
  void send_reclaim(uint64_t now);
  void nack_next_expected();
  size_t ack_below(uint8_t call, uint8_t pkt);
  void ack_all();
  void drop_all();  // frees every held and waiting buffer
  size_t retransmit_from(uint8_t call, uint8_t pkt);
  void retransmit_all();
  void on_reclaim_ack(const Header& h, uint64_t now);
  bool no_progress(uint64_t now);  // counts a retry; true if the engine went zombie
  // The retransmission interval now (backoff_interval of backoff_).
  uint64_t retx_interval() const { return backoff_interval(cfg_, rto_.rto_ns(), backoff_); }
  // A timeout found no progress: the next interval doubles.
  void back_off() { backoff_ += backoff_ < kMaxBackoff ? 1 : 0; }
  // Data moved (a new call, a packet in sequence, buffers acknowledged).
  void progress() {
    retries_ = 0;
    backoff_ = 0;
  }
  // A received packet is relevant where it came (true), or counted stray:
  // well-formed, but stale or not from a correct peer.
  bool relevant(bool ok) {
    if (!ok) ++stats_.stray;
    return ok;
  }
  void deliver(Delivery what, const std::byte* data, size_t len, bool complete, bool eo);
  void to_zombie(Delivery why);
  bool dup_response_allowed(uint64_t now);

  // Client machine (engine_client.cpp). client_rx hands each verdict of
  // the filter to its client_on_* handler. The handlers and their steps are
  // inline, defined and used in their machine's file only: the compiler may
  // fold them into the dispatch, which is on every packet.
  Errc client_send(const std::byte* data, size_t len, bool complete, bool eo, uint64_t now);
  void client_rx(const Header& h, Classified c, const std::byte* payload, size_t n, uint64_t now);
  inline void client_on_in_sequence(const Header& h, const std::byte* payload, size_t n, uint64_t now);
  inline void client_on_out_of_sequence(uint64_t now);
  inline void client_on_repeated(const Header& h, uint64_t now);
  inline void client_on_nack(const Header& h, uint64_t now);
  inline void client_on_call_ack(const Header& h, uint64_t now);
  inline void client_on_reclaim(CallRel rel, uint64_t now);
  inline void client_on_reclaim_ack(const Header& h, uint64_t now);
  void client_timer(uint64_t now);
  // The first packet of the reply is in: the call's round trip, for the RTO.
  void client_reply_started(uint64_t now);
  inline void client_reply_complete(uint8_t call, uint64_t now);
  inline void client_server_working(uint64_t now);

  // Server machine (engine_server.cpp). server_rx hands each verdict of
  // the filter to its server_on_* handler (inline, as the client's).
  Errc server_send(const std::byte* data, size_t len, bool complete, uint64_t now);
  void server_rx(const Header& h, Classified c, const std::byte* payload, size_t n, uint64_t now);
  inline void server_on_new_call(const Header& h, const std::byte* payload, size_t n);
  inline void server_on_new_call_missing_start(const Header& h);
  inline void server_on_in_sequence(const Header& h, const std::byte* payload, size_t n);
  inline void server_on_out_of_sequence(const Header& h);
  inline void server_on_repeated(const Header& h, CallRel rel, uint64_t now);
  inline void server_on_nack(const Header& h, CallRel rel, uint64_t now);
  inline void server_on_nack_current(const Header& h, uint64_t now);
  inline void server_on_call_ack(const Header& h);
  inline void server_on_reclaim(const Header& h, CallRel rel);
  inline void server_on_reclaim_ack(const Header& h, uint64_t now);
  void server_timer(uint64_t now);
  // Only a client that has the whole reply starts another call.
  bool server_may_start_call() const { return state_ != State::kReplying; }
  void server_begin_unstarted(uint8_t call, bool eo);
  inline void server_request_complete(uint8_t call);
  inline void server_ignore_rest_of_oneway(bool complete);
  inline bool server_drops_ignored_oneway(bool complete);
  void release_reply();
  void abort_oneway_if_receiving();
  void server_rearm(uint64_t now);

  void queue_chunk(const std::byte* data, size_t len, bool complete, bool eo, uint64_t now);
  void queue_chunk_in_place(std::byte* data, size_t len, bool complete, bool eo, uint64_t now);

  Role role_;
  EngineConfig cfg_;
  State state_ = State::kIdle;
  Stats stats_;

  std::deque<Packet> out_;
  std::deque<Received> in_;
  PacketSink* sink_ = nullptr;
  std::vector<std::vector<std::byte>> spare_;  // recycled packet/delivery buffers
  // send_in_place() in progress: the chunk's buffer and what to keep of it.
  std::byte* lend_ = nullptr;
  Retain lend_retain_ = Retain::kCopy;

  // Outbound call (client: the request; server: the reply).
  uint8_t tx_call_ = 0;
  uint8_t tx_next_pkt_ = 0;
  bool tx_eo_ = false;
  std::deque<Buf> held_;    // sent, exactly-once, unacknowledged (pkt order)
  std::deque<Buf> unsent_;  // exactly-once packets waiting for pool space
  bool reclaim_outstanding_ = false;

  // Inbound call (client: the reply; server: the request).
  RxExpect rx_;
  bool rx_eo_ = false;
  std::optional<uint8_t> nacked_;  // expected pkt_seq already NACKed (suppresses NACK storms)

  // Timers.
  std::optional<uint64_t> retx_due_;
  std::optional<uint64_t> ack_due_;  // client idle ack timer
  int retries_ = 0;   // consecutive timeouts without a sign of life (give-up count)
  static constexpr uint32_t kMaxBackoff = 20;
  uint32_t backoff_ = 0;  // timeouts since the last progress (interval doubling)
  std::optional<uint64_t> last_dup_response_;

  // Client: the RTO, adapted to the calls' round trips; when the current
  // call's request was complete, and whether a timeout came before its
  // reply (its round trip is then not sampled).
  RtoEstimator rto_;
  uint64_t request_done_at_ = 0;
  bool timed_out_in_call_ = false;

  // Client: last call whose reply was completely received (CALL_ACK target).
  std::optional<uint8_t> last_reply_call_;
  // Server: the reply to tx_call_ is complete (held until acknowledged).
  bool reply_complete_ = false;
  uint64_t reply_completed_at_ = 0;
};

}  // namespace otp
