// The NIC's side of the remote wire (wire/wire.hpp): opening it, connecting
// it to NICs of other hosts, importing their cookies as apertures over it,
// and the NIC logic for writes that arrive over it.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "clan_emul/aperture.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/host_identity.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/tripwire.hpp"
#include "clan_emul/wire/write_notice.hpp"

namespace clan {

Errc Nic::open_wire() {
  WireConfig& w = config_.wire;
  if (w.listen.empty()) {
    if (const char* listen = std::getenv("CLAN_WIRE_LISTEN")) w.listen = listen;
  }
  if (const char* provider = std::getenv("CLAN_WIRE_PROVIDER"); provider && *provider) w.provider = provider;
  if (w.listen.empty()) return Errc::kOk;
  auto opened = wire::Wire::open(w, *this);
  if (!opened) return opened.error();
  wire_ = std::move(opened.value());
  return Errc::kOk;
}

std::string Nic::wire_address() const { return wire_ ? wire_->address() : std::string(); }

Errc Nic::connect_wire(uint64_t nic_id, const std::string& address, Deadline deadline) {
  if (!wire_) {
    return set_error(Errc::kInvalidArgument, 0, "NIC '%s' has no wire (set NicConfig::wire.listen)",
                     config_.name.c_str());
  }
  auto link = wire_->link_to(nic_id, address, deadline);
  return link ? Errc::kOk : append_error_context(link.error(), "NIC '%s'", config_.name.c_str());
}

// Whether the cookie names a NIC of another process of this host: its
// owner's descriptor is that NIC's memory (named by the NIC's random id),
// and the owner sees this host's boot id. A NIC of another host that claims
// such a NIC's id must not take its imports (nor learn their secrets). NICs
// of this process linked by a wire reach each other over it, as tests of
// the wire within one process do; a claim of this NIC's own id is refused
// where the claim arrives (reach()).
bool Nic::names_local_nic(const RdmaCookie& cookie) const {
  if (cookie.nic_id == id()) return true;
  if (cookie.pid <= 0 || cookie.pid == ::getpid() || cookie.nic_fd < 0) return false;
  char path[64], target[128];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%d", static_cast<int>(cookie.pid), cookie.nic_fd);
  const ssize_t n = ::readlink(path, target, sizeof target - 1);
  if (n < 0) return false;
  target[n] = '\0';
  return "/memfd:" + nic_memfd_name(cookie.nic_id) + " (deleted)" == target &&
         read_boot_id_of(cookie.pid) == read_boot_id();
}

Result<Aperture> Nic::import_remote(const RdmaCookie& cookie, const Endpoint* endpoint) {
  const bool counted = endpoint == nullptr;
  {
    std::lock_guard lock(mu_);
    if (counted && imports_ >= config_.max_imports) {
      return set_error(Errc::kNoResources, 0, "NIC '%s': no imported aperture left (%u in use, limit %u)",
                       config_.name.c_str(), imports_, config_.max_imports);
    }
    if (counted) ++imports_;
  }
  const Deadline deadline = Deadline::after(config_.wire.setup_timeout);
  auto link = wire_->link_to(cookie.nic_id, std::string(), deadline);
  const Errc e = link ? wire_->validate_import(*link.value(), cookie, deadline) : link.error();
  if (e != Errc::kOk) {
    if (counted) release_import();
    return e;
  }
  Aperture a;
  a.nic_ = this;
  a.link_ = std::move(link.value());
  a.key_ = wire::registration_key(cookie.secret[0], cookie.secret[1], cookie.region, cookie.generation);
  a.slot_ = &Aperture::remote_slot();
  a.expect_state_ = region_state(cookie.generation, kRegionLive);
  a.size_ = cookie.length;
  a.cookie_ = cookie;
  a.counted_ = counted;
  return a;
}

Result<wire::WireOwner::Admitted> Nic::admit_remote_import(const RdmaCookie& cookie) {
  if (cookie.nic_id != id()) return Errc::kForgedCookie;
  if (Errc e = check_cookie(view_, cookie); e != Errc::kOk) return e;
  std::lock_guard lock(mu_);
  std::byte* base = region_base_[cookie.region];
  if (!base) return Errc::kStaleCookie;
  return Admitted{base, view_.region(cookie.region)->length};
}

void Nic::remote_write_landed(uint32_t region, size_t offset, size_t length) {
  if (region >= view_.max_regions) return;
  // The progress thread delivers for the writer on the other host: it
  // names no producer, so waiters judge by their own history.
  fire_region_tripwires(view_, view_.region(region), region, offset, length, false);
}

}  // namespace clan
