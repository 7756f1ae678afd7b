// The slow path of an aperture write: the exporter's endpoint is not
// resident (paper 004 sect. 4.1), or this aperture's own endpoint is not.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "clan_emul/aperture.hpp"
#include "clan_emul/event_queue.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/oob_pidfd.hpp"
#include "clan_emul/resident_set.hpp"
#include "clan_emul/spin_wait.hpp"

namespace clan {

namespace {

// How often a held writer looks whether the exporter still lives: the bound
// on returning a write whose endpoint's owner died meanwhile.
constexpr auto kOwnerCheck = std::chrono::milliseconds(10);
// A not-resident mark seen without an endpoint is a detach in progress
// (the bit goes first); one that stays is a corrupt peer.
constexpr uint32_t kDetachLooks = 1024;

// The exporter's process, watched through a pidfd while a write is held
// (a zombie or a reused pid would pass kill(pid, 0)); kill() where pidfds
// are not to be had.
class OwnerWatch {
 public:
  explicit OwnerWatch(int32_t pid) : pid_(pid), fd_(oob_detail::open_pidfd(pid)), gone_(fd_ < 0 && errno == ESRCH) {}
  ~OwnerWatch() {
    if (fd_ >= 0) ::close(fd_);
  }
  OwnerWatch(const OwnerWatch&) = delete;
  OwnerWatch& operator=(const OwnerWatch&) = delete;
  bool alive() const {
    if (gone_) return false;
    if (fd_ >= 0) return !oob_detail::pidfd_fired(fd_);
    return kill(pid_, 0) == 0 || errno != ESRCH;
  }

 private:
  int32_t pid_;
  int fd_;
  bool gone_;
};

Deadline earlier(Deadline a, Deadline b) { return a.when() <= b.when() ? a : b; }

}  // namespace

bool Aperture::resident() const {
  if (link_) return remote_check() == Errc::kOk;  // the wire holds no write for residency
  return valid() && slot_->state.load(std::memory_order_acquire) == expect_state_;
}

Errc Aperture::wait_resident(Deadline hold) {
  if (!valid()) return Errc::kClosed;
  if (link_) return remote_check();
  const uint64_t s = slot_->state.load(std::memory_order_acquire);
  if (s == expect_state_) return Errc::kOk;
  return admit(s, hold);
}

Errc Aperture::admit(uint64_t state, Deadline hold) {
  if (state != (expect_state_ | kRegionNotResident)) return state_error(without_residency(state));
  return hold_until_resident(hold);
}

// The message is held, not dropped: the writer asks the exporter's
// re-mapping thread for residency and waits until it is granted, the
// endpoint or region goes (its write is returned: kStaleCookie), the
// exporter's process dies (kPeerDead, within kOwnerCheck), or `hold` passes
// (kTimeout). Nothing is written unless kOk. A stopped exporter keeps its
// writers waiting up to `hold`, as a full TCP window would.
Errc Aperture::hold_until_resident(Deadline hold) {
  const NicView& v = peer_->view;
  const uint64_t held = expect_state_ | kRegionNotResident;
  const OwnerWatch owner(peer_->pid);
  for (uint32_t looks = 0;;) {
    const uint64_t s = slot_->state.load(std::memory_order_acquire);
    if (s == expect_state_) return Errc::kOk;
    if (s != held) return state_error(without_residency(s));
    const uint32_t ep = slot_->endpoint.load(std::memory_order_acquire);
    const uint32_t queue = v.header()->driver_queue.load(std::memory_order_acquire);
    if (ep == 0 || ep > v.max_endpoints || queue == 0) {
      if (++looks < kDetachLooks) continue;
      return Errc::kCorrupt;
    }
    EndpointSlot* e = v.endpoint(ep - 1);
    // Any change of residency ends the wait, a load quickly followed by an
    // eviction included: the writer then asks again.
    const uint32_t seen = e->loads.load(std::memory_order_seq_cst);
    EventQueue::post(v, queue - 1, e->source.load(std::memory_order_relaxed));
    auto changed = [&] {
      return slot_->state.load(std::memory_order_acquire) != held ||
             e->loads.load(std::memory_order_seq_cst) != seen;
    };
    const WaitPolicy policy{nic_->wait_mode(), nic_->spin_budget().count(), nullptr};
    const Errc w =
        wait_on_word(changed, policy, e->sleepers, e->loads, earlier(hold, Deadline::after(kOwnerCheck)));
    if (w != Errc::kTimeout) continue;
    if (!owner.alive()) return Errc::kPeerDead;
    if (hold.expired()) return Errc::kTimeout;
  }
}

// On the host read-write (paper 004 Fig. 2): the write goes on, and the
// endpoint asks for a frame in the background.
void Aperture::own_endpoint_fault() { nic_->resident_set().request(own_endpoint_); }

}  // namespace clan
