// One connection of the wire: a libfabric FI_EP_MSG endpoint to one NIC of
// another host. The connecting side writes through it (its apertures into
// that NIC) and asks it to check cookies; the accepting side answers.
// Writes on one endpoint land in order (FI_ORDER_WAW, and sends after
// writes: FI_ORDER_SAW), as CLAN delivers them (paper 000 sect. 2).
// A link that goes down stays down: the violating or vanished peer breaks
// only its own link, and the next import makes a new one.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "clan_emul/deadline.hpp"
#include "clan_emul/error.hpp"
#include "clan_emul/wire/staging_ring.hpp"

struct fid_ep;

namespace clan::wire {

class WireEngine;

class WireLink {
 public:
  enum class State : uint8_t { kConnecting, kUp, kDown };
  static constexpr size_t kReceiveSlots = 64;
  static constexpr size_t kReceiveBytes = 128;
  // Import replies in flight on an accepted link: past this, the link's
  // receives are not posted again until one completes, so a peer that
  // never reads its replies is held back by the transport's own flow
  // control instead of making this NIC queue replies for it.
  static constexpr size_t kMaxRepliesInFlight = 4;
  // Messages (notices, small writes, control messages) go as injects, which
  // the provider may queue without limit for a peer that takes nothing.
  // Every kInjectMark-th asks for a completion; past kMaxInjectsQueued not
  // known sent, a sender waits (within its deadline, then the stall
  // timeout) as a write waits for the staging ring.
  static constexpr uint64_t kInjectMark = 64;
  static constexpr uint64_t kMaxInjectsQueued = 1024;

  WireLink(WireEngine& wire, uint64_t id, uint64_t peer_nic, size_t staging_bytes, size_t inject_size);
  ~WireLink();
  WireLink(const WireLink&) = delete;
  WireLink& operator=(const WireLink&) = delete;

  uint64_t id() const { return id_; }
  uint64_t peer_nic() const { return peer_nic_; }
  State state() const { return state_.load(std::memory_order_acquire); }
  // Why the link is down (kOk while it is not).
  Errc down_reason() const { return down_reason_.load(std::memory_order_acquire); }

  // Writes [src, src+len) at `offset` of the target's registration `key`,
  // telling the target's NIC which region it wrote (write_notice.hpp).
  // Nothing is written if the link cannot take the first part before
  // `hold`: kTimeout. kClosed (with words) once the link is down.
  Errc write(uint64_t key, uint32_t region, uint64_t offset, const void* src, size_t len, Deadline hold);
  // A control message (wire_message.hpp), sent after every write before it;
  // kTimeout if the link cannot take it before `hold`.
  Errc send(const void* msg, size_t len, Deadline hold);
  // kRevokedCookie once the exporter said it revoked or freed `region` at
  // `generation`, else kOk.
  Errc revoked(uint32_t region, uint32_t generation);

 private:
  friend class WireEngine;
  Errc post_chunk(uint64_t key, uint32_t region, uint64_t offset, const std::byte* src, size_t len,
                  Deadline hold, std::unique_lock<std::mutex>& lock);
  ssize_t post_write(uint64_t key, uint64_t offset, const std::byte* src, size_t len);
  Errc post_inline(uint32_t region, uint64_t offset, const std::byte* src, size_t len, Deadline hold,
                   std::unique_lock<std::mutex>& lock);
  Errc post_notice(uint32_t region, uint64_t offset, size_t len, std::unique_lock<std::mutex>& lock);
  Deadline stall_deadline() const;
  Errc stalled(const char* what);
  // One message out, counted against kMaxInjectsQueued (under mu_); waits
  // for room until `hold`: kTimeout. kClosed once the link is down.
  Errc inject(const void* msg, size_t len, Deadline hold, std::unique_lock<std::mutex>& lock);
  ssize_t post_inject(const void* msg, size_t len);
  // The completion of a marked inject: kInjectMark more are sent.
  void inject_mark_done();
  Errc post_receive(size_t slot);
  // The accepting side, under the engine's progress lock: an import reply
  // (fi_send with a completion, from a buffer of the link's), and what
  // the completion of one gives back.
  Errc send_reply(const void* msg, size_t len);
  void reply_done();
  // Tells the peer of a revocation: one inject, never waiting (the
  // progress lock is held); a full queue leaves the peer to find out by
  // its link breaking on the closed key.
  Errc send_notice_of_revocation(const void* msg, size_t len);
  void note_revoked(uint32_t region, uint32_t generation);
  // A receive slot handled: posted again, or held while replies are many.
  void receive_done(size_t slot);
  void set_up();
  void set_down(Errc reason);
  void close_endpoint();  // under mu_
  std::byte* receive_buffer(size_t slot) { return receive_.data() + slot * kReceiveBytes; }

  WireEngine& wire_;
  const uint64_t id_;
  const uint64_t peer_nic_;
  const size_t inject_size_;
  std::atomic<State> state_{State::kConnecting};
  std::atomic<Errc> down_reason_{Errc::kOk};
  std::mutex mu_;  // posts go out in the order their writers took it
  fid_ep* ep_ = nullptr;
  StagingRing staging_;
  std::vector<std::byte> receive_;
  // The accepting side's state, under the engine's progress lock: the
  // regions (and their generations) this link's peer imported, the only
  // ones its notices may name; its reply buffers and held receive slots.
  std::map<uint32_t, uint32_t> imported_;
  std::array<std::array<std::byte, kReceiveBytes>, kMaxRepliesInFlight> replies_{};
  size_t replies_in_flight_ = 0;
  size_t next_reply_ = 0;
  std::vector<size_t> held_slots_;
  // Injects posted, and those known sent (by their marks' completions).
  uint64_t injected_ = 0;
  uint64_t injects_sent_ = 0;
  // The connecting side's: regions (by generation) the exporter revoked,
  // under mu_; writes to them are refused.
  std::map<uint32_t, uint32_t> revoked_;
  std::atomic<bool> any_revoked_{false};
};

}  // namespace clan::wire
