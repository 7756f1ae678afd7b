// giop:otp connection: omniORB over the omniTransport protocol (paper 002)
// over the fabric's unreliable in-order datagram link with credit flow
// control. The GIOP framer tells the protocol engine where each call ends
// (complete / partial) and whether it is answered (exactly-once) or not
// (one-way, at-most-once). Recv drives the engine: it feeds it datagrams and
// timer ticks and hands its deliveries to omniORB. A one-way request is given
// to omniORB only once complete, so one the engine aborts (part of it lost)
// is dropped whole, never half-unmarshalled. Timers of a connection nobody is
// waiting on run on the process's timer service.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "clan_emul/datagram_link.hpp"
#include "omnitransport/engine.hpp"
#include "orb_transports/common/fabric.hpp"
#include "orb_transports/common/monitored_connection.hpp"
#include "orb_transports/otp/giop_framer.hpp"
#include "orb_transports/otp/otp_timer_service.hpp"

namespace clanorb {

class OtpConnection : public MonitoredConnection, public OtpTimerClient, private otp::PacketSink {
 public:
  OtpConnection(std::shared_ptr<Fabric> fabric, std::unique_ptr<clan::DatagramLink> link,
                otp::Role role, std::string my_address, std::string peer_address,
                MonitoredEndpoint* endpoint);
  ~OtpConnection() override;

  int Send(void* buf, size_t sz, const omni_time_t& deadline) override;
  int Recv(void* buf, size_t sz, const omni_time_t& deadline) override;
  void Shutdown() override;
  const char* myaddress() override { return my_address_.c_str(); }
  const char* peeraddress() override { return peer_address_.c_str(); }

  void on_timer_due() override;
  // The protocol engine's counts (what the end-of-connection trace prints).
  otp::Stats protocol_stats();

 protected:
  // Stops the timer service calling in, waiting for a call in progress. The
  // most-derived class's destructor must call it first: once a destructor
  // below it runs, the object's virtual functions (the timer's, the
  // engine's sink) are being replaced under the service's call. A server
  // connection is an OtpConnection itself; a client's calls it from its own.
  void retire();

  bool readable() override;
  bool wait_readable(clan::Deadline deadline) override;
  void notify_to(clan::EventQueue* queue, uint32_t source) override {
    link_->notify_to(queue, source);
  }

 private:
  // With mu_ held (via `lk`): moves the engine's packets to the out-queue,
  // schedules its timer, and sends what the link's credit allows. The lock is
  // released around each link send: a sender waiting for credit must never
  // stop this connection's receiver from consuming (which is what returns
  // credit to the peer). Only one thread drains the queue, keeping order.
  // Send passes its deadline (it may wait for credit); Recv and timers pass
  // nothing: a short credit wait (credit_wait()), and no clock read when
  // nothing waits for credit.
  void flush(std::unique_lock<std::mutex>& lk, std::optional<clan::Deadline> deadline = {});
  // Send's wait for credit: flush() in slices, taking in between them what
  // the peer sent (take_in). A sender that only waited would stop consuming,
  // and the peer, waiting for our credit to answer us, would never get its
  // own credit back: both stall until the protocol gives up.
  void push_out(std::unique_lock<std::mutex>& lk, clan::Deadline deadline);
  // With mu_ held, for threads other than Recv: feeds the engine what the
  // link has now (consuming it returns the peer's credit; duplicates draw
  // the engine's answers), unless a thread in Recv or another reader does
  // that; stops for a thread coming into Recv.
  // On a server only from readable(), which omniORB never calls while its
  // thread waits in Peek (wait_readable would wait on for what we took).
  void take_in(std::unique_lock<std::mutex>& lk);
  // With mu_ held: datagrams still wait for credit and no thread is in Recv
  // (a Send whose deadline passed, a timer, readable()): asks the timer
  // service to come back for them soon. Nobody may read this side again
  // (a client after a one-way), and the credit the peer returns lies unread
  // in our link until someone takes it in.
  void retry_sends_later();
  // The reading turn (with mu_ held): a thread takes datagrams off the link
  // only while it holds the turn, and gives it back once the engine has the
  // datagram (mu_ held from its return from the link until then). Readers
  // of several threads (Recv, take_in, wait_readable) would otherwise feed
  // the engine out of the link's order, and a one-way is aborted at the
  // first gap. wait_turn waits until the turn is free (false: the deadline
  // passed first); end_turn gives it back.
  bool wait_turn(std::unique_lock<std::mutex>& lk, clan::Deadline deadline);
  void end_turn();
  // With mu_ held: asks the timer service for a wake-up by the engine's next
  // timer (or the idle watch's), if none is asked for within the reader
  // grace of it already.
  void schedule_timer_locked();
  // How late a timer may be before the service runs it although a thread is
  // in Recv (which runs it on time unless held up).
  uint64_t reader_grace_ns() const { return rto_ns_ / 2; }
  // The idle watch ends well after a server repeating its reply has given up.
  uint64_t watch_last_ns() const { return give_up_ns_ / 5 * 8; }
  // on_timer_due's steps, with mu_ held. leave_timer_to_reader: a thread in
  // Recv runs the timer (true; the service comes back later).
  // advance_idle_watch: starts the idle watch or moves it on.
  // keep_busy_client_in_view: a client between calls is looked at again
  // within an RTO and the grace.
  bool leave_timer_to_reader(uint64_t now);
  void advance_idle_watch(uint64_t now);
  void keep_busy_client_in_view(uint64_t now);
  // With mu_ held: the earliest of the engine's timer and the idle watch.
  std::optional<uint64_t> next_wakeup() const;
  // Counts a thread in Recv (in_recv_) while it lives; on its way out, asks
  // the timer service for what that thread leaves behind.
  class InRecv;
  // Recv's steps, with mu_ held. copy_ready: hands what omniORB may read
  // to it, up to sz bytes. recv_wait_until: how long to wait for a datagram
  // (the caller's deadline, the engine's next timer, the out-queue's next
  // try), and whether to poll (poll_until_, around recovery_due()).
  // receive_into_engine: waits for one datagram (holding the reading turn)
  // and feeds it to the engine; what Recv returns if it must return with
  // nothing for omniORB (0: the caller's deadline passed; -1: the link
  // ended), else nullopt.
  // Inline, defined and used in otp_connection.cpp only: Recv is on every
  // call, and the compiler may fold its steps into it.
  inline size_t copy_ready(std::byte* out, size_t sz);
  inline clan::Deadline recv_wait_until(clan::Deadline caller, uint64_t now);
  inline std::optional<int> receive_into_engine(std::unique_lock<std::mutex>& lk, clan::Deadline caller,
                                                clan::Deadline until, uint64_t& now);
  // With mu_ held: moves engine deliveries into `ready_` (whole one-ways).
  // False if the connection ended (EOF / BAD).
  bool collect_locked();
  // With mu_ held: at trace level 10, why the connection ended, with counts.
  void log_end(const char* why);
  // `in_place`: the bytes are omniORB's own marshalling buffer, which the
  // engine may write a header into for the time of a transmission. `now`:
  // clan::now_ns() read just before (0: read it here).
  int send_to_engine(std::byte* data, size_t len, bool complete, bool exactly_once, bool in_place,
                     clan::Deadline deadline, uint64_t now);
  // The engine's sink (with mu_ held): straight onto the link when nothing
  // waits before it and credit is there, without waiting; else a copy joins
  // the out-queue, in order.
  void transmit(const std::byte* packet, size_t len) override;
  void enqueue(const std::byte* packet, size_t len);

  std::shared_ptr<Fabric> fabric_;
  std::unique_ptr<clan::DatagramLink> link_;
  std::string my_address_, peer_address_;

  // How long a silent peer is waited for: the connection manager's peer timeout.
  const uint64_t give_up_ns_;
  std::mutex mu_;  // the engine and the delivery queues; never held while waiting on the link
  otp::Engine engine_;
  uint64_t rto_ns_;
  GiopFramer framer_;
  std::vector<std::byte> undecided_;  // bytes of a request whose header is incomplete
  std::deque<std::vector<std::byte>> ready_;  // bytes for omniORB, in order
  size_t ready_off_ = 0;                      // consumed of ready_.front()
  std::vector<std::byte> oneway_;  // a one-way request being gathered (bounded: a larger
                                   // one than omniORB accepts ends the connection)
  bool oneway_refused_ = false;    // such a one-way came: nothing more of it is gathered
  bool ended_ = false;
  int in_recv_ = 0;         // threads in Recv: they run the engine's timers, not the service
  uint64_t scheduled_ = 0;  // wake-up asked of the timer service (0: none)
  uint64_t poll_until_ = 0;  // Recv polls rather than sleeps until then (recovery after a loss)
  std::vector<std::byte> rxbuf_;  // the reading turn's
  bool reading_ = false;         // a thread holds the reading turn
  int turn_waiters_ = 0;
  std::condition_variable turn_free_;
  // Idle watch (clients): nobody reads an idle client connection, yet the
  // server repeats its reply there until it has our acknowledgement (which
  // may be late or lost) and then gives up on the connection. So the timer
  // service looks at the link now and then once it finds it idle: at
  // watch_due_, then at doubling intervals while the server may be repeating.
  uint64_t watch_due_ = 0;  // 0: not watching
  uint64_t watch_interval_ = 0;
  uint64_t calls_at_timer_ = 0;  // engine call count at the service's last wake-up
  std::deque<std::vector<std::byte>> outq_;  // packets waiting for link credit, in order
  std::vector<std::vector<std::byte>> spare_;  // recycled out-queue buffers
  bool sending_ = false;                     // a thread is draining outq_
};

}  // namespace clanorb
