// A real unreliable datagram channel between two hosts: one endpoint of
// libfabric's udp provider (FI_EP_DGRAM, FI_MSG), carrying the frames of a
// DatagramSender / DatagramReceiver pair (datagram_layout.hpp) both ways.
// omniTransport was designed for such a link (paper 002 sect. 3); UDP may
// also reorder, which the layer above treats as loss.
//
// What the provider gives, and what this class makes of it:
//  - FI_MSG only, no ordering, datagrams of at most kUdpMaxPayload (1472)
//    bytes. Every frame goes out with fi_inject (the provider's inject size
//    is the whole datagram), so sends never produce completions and the
//    caller's buffer is free at once.
//  - A larger datagram is truncated silently to the posted buffer. So the
//    receive buffers are one byte longer than the largest frame: a
//    completion that fills one was truncated, and is discarded and counted,
//    as is one the provider reports with FI_ETRUNC.
//  - Anybody may send to our port. With FI_SOURCE every completion names
//    its sender in our address vector; frames from any address but the
//    peer's are discarded and counted (`foreign`). UDP source addresses can
//    be forged, which the CRC and the link's sequence checks bound but do not
//    prevent: this channel carries no secret.
//  - Progress happens only inside fi_cq_read, so waiting means calling it:
//    receive() spins on fi_cq_readfrom under the fabric's spin-then-block
//    policy (spin_wait.hpp), then blocks in ppoll on the completion queue's
//    wait fd (FI_GETWAIT, after FI_GETWAITOBJ said it is an fd) after
//    fi_trywait, beside an eventfd that abort() writes. Completions enter
//    the queue only inside the reader's own calls, and it takes them at once.
//  - So outside those calls what is unread is in the socket. readable() and
//    the event-queue notifier look at the endpoint's socket itself, found by
//    its name among the descriptors the wait fd's epoll set watches
//    (libfabric hands out no endpoint fd): the queue's wait fd would not do, since it stays readable
//    after every completion until the reader's next fi_trywait, and a
//    trywait from any other thread could hide a completion from the reader.
//
// Thread safety: send() from one thread at a time and receive() / release()
// from one (another) thread at a time (the domain is FI_THREAD_SAFE);
// readable(), stats(), abort_*() and peer_closed() from any thread.
// Event-queue delivery, when asked for, runs on a thread of its own
// (udp_notifier.hpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "clan_emul/deadline.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/spin_wait.hpp"

struct fid_fabric;
struct fid_domain;
struct fid_av;
struct fid_cq;
struct fid_ep;

namespace clan {
class EventQueue;
}

namespace clan::wire {

class UdpNotifier;

// The largest UDP payload on an Ethernet MTU (1500 - 20 IPv4 - 8 UDP): the
// provider's max_msg_size.
inline constexpr size_t kUdpMaxPayload = 1472;
// The longest endpoint name (fi_getname) carried to the peer: a sockaddr_in6.
inline constexpr size_t kUdpMaxName = 28;

struct UdpOptions {
  std::string address = "127.0.0.1";  // numeric IPv4 or IPv6 address to bind
  uint16_t port = 0;                   // 0: any free port
  size_t max_frame = kUdpMaxPayload;   // largest frame sent or accepted
  size_t receive_buffers = 128;        // posted receive buffers
  WaitPolicy wait{};                   // mode and spin budget of receive(); no producer
};

struct UdpFrame {
  const std::byte* data;  // in a posted buffer; valid until release()
  size_t size;
};

struct UdpChannelStats {
  uint64_t received = 0;   // completions taken from the queue, good or bad
  uint64_t truncated = 0;  // longer than max_frame: cut by the provider, discarded
  uint64_t foreign = 0;    // from an address other than the peer's, discarded
  uint64_t errors = 0;     // error completions other than truncation, discarded
  uint64_t send_busy = 0;  // sends the socket refused for now (FI_EAGAIN)
  uint64_t events = 0;     // posted to the directed event queue (notify_to)
};

class UdpChannel {
 public:
  // Opens the provider on the options' address, an endpoint bound there,
  // its address vector and completion queue, and posts the receive buffers.
  // kInvalidArgument (with words) for a bad address or max_frame; a
  // libfabric failure in words (fi_error.hpp).
  static Result<std::unique_ptr<UdpChannel>> open(const UdpOptions& options);
  ~UdpChannel();
  UdpChannel(const UdpChannel&) = delete;
  UdpChannel& operator=(const UdpChannel&) = delete;

  // Our endpoint's name (fi_getname: a sockaddr), what the peer sends to.
  const std::vector<std::byte>& name() const { return name_; }
  // The peer's name, checked (udp_name.hpp: same family as ours, a real
  // port) and inserted into the address vector. kCorrupt if malformed.
  Errc connect(const std::byte* name, size_t len);

  // One frame of at most max_frame bytes (kInvalidArgument beyond), sent
  // with fi_inject. While the socket has no room, retries until the
  // deadline (kTimeout: not sent). kOk means handed to the kernel.
  Errc send(const void* frame, size_t len, Deadline deadline);

  // The next frame of at most max_frame bytes from the peer, discarding
  // truncated, foreign and failed ones on the way; waits per the policy
  // until the deadline (kTimeout). After peer_closed(), kClosed once nothing
  // more is there; after abort_receive(), its reason.
  Result<UdpFrame> receive(Deadline deadline);
  // Reposts the buffer of the frame receive() returned.
  Errc release();
  // A datagram (possibly one to discard) is waiting, or the end: a
  // zero-timeout poll of the endpoint's socket, which reads nothing.
  bool readable() const;

  // Posts to `queue` as `source` when a datagram arrives (nullptr:
  // nowhere): once, then again after a receive() or readable() found
  // nothing, from a thread of the channel's own started on first use
  // (udp_notifier.hpp). Not concurrently with itself.
  Errc notify_to(EventQueue* queue, uint32_t source);

  void abort_send(Errc reason);
  void abort_receive(Errc reason);  // wakes a blocked receive()
  void peer_closed();               // orderly end: drain, then kClosed; wakes receive()
  Errc send_status() const { return tx_status_.load(std::memory_order_acquire); }
  Errc receive_status() const { return rx_status_.load(std::memory_order_acquire); }

  UdpChannelStats stats() const;
  size_t max_frame() const { return options_.max_frame; }
  int wait_fd() const { return wait_fd_; }

 private:
  struct Objects;  // the libfabric objects (udp_open.cpp)
  struct Sleep;    // how receive() blocks (udp_channel.cpp)
  explicit UdpChannel(const UdpOptions& options);
  Errc open_objects();
  Errc post_receives();
  Errc repost(size_t slot);
  // Completions taken off the queue and judged until a good frame (kOk, in
  // *frame) or none is left (kWouldBlock); bad ones are reposted.
  Errc poll_once(UdpFrame* frame);
  Errc take_error();
  bool block(Deadline deadline);
  // fi_trywait: false if a completion is there to read (or the provider
  // says to look again); true if the reader may block on the wait fd. It
  // lowers libfabric's completion signal on the way, so the reader alone
  // calls it: another caller could lower the signal of a completion the
  // reader, asleep on the fd, has not taken yet.
  bool may_block();
  Errc find_socket();  // socket_fd_ (udp_open.cpp)

  UdpOptions options_;
  std::unique_ptr<Objects> fi_;
  std::unique_ptr<UdpNotifier> notifier_;  // before fi_ goes: it watches the CQ's fd
  std::atomic<UdpNotifier*> armer_{nullptr};  // notifier_, for receive() to re-arm
  std::vector<std::byte> name_;
  std::vector<std::byte> buffers_;  // receive_buffers x (max_frame + 1)
  size_t buffer_bytes_ = 0;
  uint64_t peer_ = ~uint64_t{0};    // the peer's fi_addr_t
  bool has_peer_ = false;
  int wait_fd_ = -1;                // the CQ's, owned by libfabric
  int socket_fd_ = -1;              // the endpoint's socket, owned by libfabric
  int wake_fd_ = -1;                // eventfd, ours
  size_t pending_slot_ = SIZE_MAX;  // the buffer receive() handed out
  std::atomic<Errc> tx_status_{Errc::kOk};
  std::atomic<Errc> rx_status_{Errc::kOk};
  std::atomic<bool> peer_closed_{false};
  std::atomic<uint32_t> sleepers_{0};
  // Single-writer counters (send side, receive side).
  std::atomic<uint64_t> received_{0}, truncated_{0}, foreign_{0}, errors_{0}, send_busy_{0};
};

}  // namespace clan::wire
