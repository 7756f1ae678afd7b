// The exporting side of the wire: cookies that other hosts present are
// checked against the NIC's region table, their regions registered with a
// key derived from the cookie, and each write delivered from the region's
// shadow into the region once its notice arrives (wire.hpp).
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <sys/mman.h>

#include <atomic>
#include <cstring>

#include "clan_emul/error_detail.hpp"
#include "clan_emul/wire/fi_error.hpp"
#include "clan_emul/wire/wire_engine.hpp"
#include "clan_emul/wire/wire_message.hpp"
#include "clan_emul/wire/write_notice.hpp"

namespace clan::wire {
namespace {

uint64_t key_of(const RdmaCookie& c) {
  return registration_key(c.secret[0], c.secret[1], c.region, c.generation);
}

// A write as a local writer makes it: an aligned word as one release
// store (a protocol's pointer), anything else copied, then a release fence.
void copy_into_region(std::byte* to, const std::byte* from, size_t len) {
  if (len == 8 && reinterpret_cast<uintptr_t>(to) % 8 == 0) {
    uint64_t word;
    std::memcpy(&word, from, 8);
    std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(to)).store(word, std::memory_order_release);
    return;
  }
  if (len != 0) std::memcpy(to, from, len);
  std::atomic_thread_fence(std::memory_order_release);
}

}  // namespace

void WireEngine::on_import_request(WireLink& link, uint64_t request, const RdmaCookie& cookie) {
  Errc status = Errc::kOk;
  if (cookie.region > kMaxWireRegion || cookie.length > kMaxWireRegionBytes) {
    status = Errc::kNoResources;
  } else if (auto admitted = owner_.admit_remote_import(cookie); !admitted) {
    status = admitted.error();
  } else {
    status = register_region(cookie, admitted.value());
  }
  // Its notices may name this region, at this generation, from now on.
  if (status == Errc::kOk) link.imported_[cookie.region] = cookie.generation;
  const auto reply = encode_wire_message(WireMessage{WireOp::kImportReply, status, request, {}});
  if (link.send_reply(reply.data(), reply.size()) != Errc::kOk) link_down(link.id(), Errc::kCorrupt);
}

void WireEngine::on_import_reply(WireLink& link, uint64_t request, Errc status) {
  std::lock_guard lock(requests_mu_);
  auto it = requests_.find(request);
  if (it == requests_.end() || it->second.link != link.id()) {
    messages_dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  it->second.status = status;
  requests_cv_.notify_all();
}

// Called with progress_mu_ held (by whoever reads the completion queue).
Errc WireEngine::register_region(const RdmaCookie& cookie, const WireOwner::Admitted& admitted) {
  auto it = registrations_.find(cookie.region);
  if (it != registrations_.end()) {
    if (it->second.generation == cookie.generation && it->second.key == key_of(cookie)) return Errc::kOk;
    release(it->second);
    registrations_.erase(it);
  }
  Registration r;
  r.generation = cookie.generation;
  r.key = key_of(cookie);
  r.base = admitted.base;
  r.length = admitted.length;
  void* shadow = ::mmap(nullptr, r.length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (shadow == MAP_FAILED) return Errc::kNoResources;
  r.shadow = static_cast<std::byte*>(shadow);
  int rc = fi_mr_reg(domain_, r.shadow, r.length, FI_REMOTE_WRITE, 0, r.key, 0, &r.mr, nullptr);
  if (rc != 0) {
    ::munmap(r.shadow, r.length);
    return rc == -FI_ENOKEY ? Errc::kNoResources : errc_from_fi(rc);
  }
  registrations_.emplace(cookie.region, r);
  return Errc::kOk;
}

void WireEngine::release(Registration& r) {
  if (r.mr) fi_close(&r.mr->fid);
  if (r.shadow) ::munmap(r.shadow, r.length);
  r.mr = nullptr;
  r.shadow = nullptr;
}

void WireEngine::close_registration(uint32_t region) {
  std::lock_guard lock(progress_mu_);
  // Writes that landed in the shadow are delivered before it goes.
  drain_cq();
  auto it = registrations_.find(region);
  if (it == registrations_.end()) return;
  tell_revoked(region, it->second.generation);
  release(it->second);
  registrations_.erase(it);
}

// The writers that imported it hear at once, so their next write is
// refused (kRevokedCookie) rather than breaking their link on a closed key.
void WireEngine::tell_revoked(uint32_t region, uint32_t generation) {
  RdmaCookie gone{};
  gone.region = region;
  gone.generation = generation;
  const auto msg = encode_wire_message(WireMessage{WireOp::kRevoked, Errc::kOk, 0, gone});
  std::vector<std::shared_ptr<WireLink>> told;
  {
    std::lock_guard lock(links_mu_);
    for (auto& [id, link] : links_) {
      auto imported = link->imported_.find(region);
      if (imported != link->imported_.end() && imported->second == generation) told.push_back(link);
    }
  }
  for (auto& link : told) (void)link->send_notice_of_revocation(msg.data(), msg.size());
}

// Called with progress_mu_ held. The notice comes from another host: its
// region must be one its link imported, at the registration's generation,
// and its offset and length within the registration.
void WireEngine::deliver(WireLink& link, const WriteNotice& n, const std::byte* inline_data) {
  auto it = registrations_.find(n.region);
  auto imported = link.imported_.find(n.region);
  if (it == registrations_.end() || imported == link.imported_.end() ||
      imported->second != it->second.generation || n.length > kMaxNoticeLength ||
      n.offset > it->second.length || n.length > it->second.length - n.offset) {
    notices_dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const Registration& r = it->second;
  copy_into_region(r.base + n.offset, inline_data ? inline_data : r.shadow + n.offset, n.length);
  if (defer_landed_) {
    landed_.push_back(Landed{n.region, n.offset, n.length});
  } else {
    owner_.remote_write_landed(n.region, n.offset, n.length);
  }
}

}  // namespace clan::wire
