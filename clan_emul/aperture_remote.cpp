// An aperture onto a region of a NIC of another host: its writes go over
// the wire (wire/wire.hpp) as RMA writes that tell the target which region
// they wrote, in order with every other write on the link. Cookie, bounds
// and key are checked by the target's NIC; the aperture checks bounds
// first so that a bad offset costs the writer an error, not its link.
#include <cstdint>
#include <limits>

#include "clan_emul/aperture.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/wire/wire.hpp"

namespace clan {

RegionSlot& Aperture::remote_slot() {
  // No cookie's expected state is all ones (kinds are small), so every
  // write through a remote aperture fails the local comparison.
  static RegionSlot slot{};
  static const bool marked = (slot.state.store(std::numeric_limits<uint64_t>::max()), true);
  (void)marked;
  return slot;
}

Errc Aperture::remote_write(size_t offset, const void* src, size_t len, Deadline hold) {
  if (Errc e = link_->revoked(cookie_.region, cookie_.generation); e != Errc::kOk) return e;
  return link_->write(key_, cookie_.region, offset, src, len, hold);
}

Errc Aperture::remote_check() const {
  if (Errc e = link_->revoked(cookie_.region, cookie_.generation); e != Errc::kOk) return e;
  if (link_->state() != wire::WireLink::State::kDown) return Errc::kOk;
  return set_error(Errc::kClosed, 0, "the wire to NIC %016llx is down: %s",
                   static_cast<unsigned long long>(cookie_.nic_id), to_string(link_->down_reason()));
}

Errc Aperture::fence(Deadline deadline) const {
  if (!nic_) return Errc::kClosed;
  if (!link_) return Errc::kOk;
  return nic_->wire()->fence(*link_, cookie_, deadline);
}

}  // namespace clan
