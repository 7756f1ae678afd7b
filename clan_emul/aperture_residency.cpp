// The slow path of an aperture write: the exporter's endpoint is not
// resident (paper 004 sect. 4.1), or this aperture's own endpoint is not.
#include <signal.h>

#include <cerrno>
#include <chrono>

#include "clan_emul/aperture.hpp"
#include "clan_emul/event_queue.hpp"
#include "clan_emul/nic.hpp"
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

bool process_alive(int32_t pid) { return kill(pid, 0) == 0 || errno != ESRCH; }

}  // namespace

Errc Aperture::admit(uint64_t state) {
  if (state != (expect_state_ | kRegionNotResident)) return state_error(without_residency(state));
  return hold_until_resident();
}

// The message is held, not dropped: the writer asks the exporter's
// re-mapping thread for residency and waits until it is granted, the
// endpoint or region goes (its write is returned: kStaleCookie), or the
// exporter's process dies (kPeerDead, within kOwnerCheck). A stopped
// exporter keeps its writers waiting, as a full TCP window would.
Errc Aperture::hold_until_resident() {
  const NicView& v = peer_->view;
  const uint64_t held = expect_state_ | kRegionNotResident;
  auto released = [&] { return slot_->state.load(std::memory_order_acquire) != held; };
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
    EventQueue::post(v, queue - 1, e->source.load(std::memory_order_relaxed));
    const WaitPolicy policy{nic_->wait_mode(), nic_->spin_budget().count(), nullptr};
    const Errc w = wait_on_word(released, policy, e->sleepers, e->loads, Deadline::after(kOwnerCheck));
    if (w == Errc::kTimeout && !process_alive(peer_->pid)) return Errc::kPeerDead;
  }
}

// On the host read-write (paper 004 Fig. 2): the write goes on, and the
// endpoint asks for a frame in the background.
void Aperture::own_endpoint_fault() { nic_->resident_set().request(own_endpoint_); }

}  // namespace clan
