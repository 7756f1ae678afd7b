#include "tests/clan_emul/raw_fi_peer.hpp"

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "clan_emul/wire/wire_address.hpp"
#include "clan_emul/wire/wire_hints.hpp"

namespace clan::test {
namespace {

constexpr size_t kSlots = 4;
constexpr size_t kSlotBytes = 256;
constexpr uintptr_t kWriteTag = 0x100;  // a write's context; receive slots are 1..kSlots

bool check(int r, const char* what) {
  if (r == 0) return true;
  std::fprintf(stderr, "raw peer: %s: %s\n", what, fi_strerror(-r));
  return false;
}

}  // namespace

std::unique_ptr<RawFiPeer> RawFiPeer::connect(const std::string& address, Deadline deadline) {
  std::unique_ptr<RawFiPeer> p(new RawFiPeer);
  if (!p->open(address, deadline)) return nullptr;
  return p;
}

bool RawFiPeer::open(const std::string& address, Deadline deadline) {
  auto where = wire::parse_wire_address(address);
  if (!where) return false;
  wire::HintsPtr hints = wire::make_hints("tcp");
  const std::string service = where->service();
  if (!check(fi_getinfo(wire::kFiVersion, where->host.c_str(), service.c_str(), 0, hints.get(), &info_),
             "fi_getinfo")) {
    return false;
  }
  fi_eq_attr eq_attr{};
  eq_attr.wait_obj = FI_WAIT_NONE;
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_DATA;
  cq_attr.wait_obj = FI_WAIT_NONE;
  cq_attr.size = 1024;
  if (!check(fi_fabric(info_->fabric_attr, &fabric_, nullptr), "fi_fabric") ||
      !check(fi_domain(fabric_, info_, &domain_, nullptr), "fi_domain") ||
      !check(fi_eq_open(fabric_, &eq_attr, &eq_, nullptr), "fi_eq_open") ||
      !check(fi_cq_open(domain_, &cq_attr, &cq_, nullptr), "fi_cq_open") ||
      !check(fi_endpoint(domain_, info_, &ep_, nullptr), "fi_endpoint") ||
      !check(fi_ep_bind(ep_, &eq_->fid, 0), "fi_ep_bind eq") ||
      !check(fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind cq") ||
      !check(fi_enable(ep_), "fi_enable")) {
    return false;
  }
  receive_.resize(kSlots * kSlotBytes);
  post_receives();
  if (!check(fi_connect(ep_, info_->dest_addr, nullptr, 0), "fi_connect")) return false;
  return await_connected(deadline);
}

void RawFiPeer::post_receives() {
  for (size_t slot = 0; slot < kSlots; ++slot) {
    (void)fi_recv(ep_, receive_.data() + slot * kSlotBytes, kSlotBytes, nullptr, 0,
                  reinterpret_cast<void*>(slot + 1));
  }
}

bool RawFiPeer::await_connected(Deadline deadline) {
  while (!deadline.expired()) {
    uint32_t event = 0;
    fi_eq_cm_entry entry{};
    const ssize_t n = fi_eq_read(eq_, &event, &entry, sizeof entry, 0);
    if (n > 0 && event == FI_CONNECTED) return true;
    if (n == -FI_EAVAIL) {
      fi_eq_err_entry err{};
      (void)fi_eq_readerr(eq_, &err, 0);
      std::fprintf(stderr, "raw peer: connect: %s\n", fi_strerror(err.err));
      return false;
    }
  }
  std::fprintf(stderr, "raw peer: connect: timed out\n");
  return false;
}

RawFiPeer::~RawFiPeer() {
  vanish();
  if (cq_) fi_close(&cq_->fid);
  if (eq_) fi_close(&eq_->fid);
  if (domain_) fi_close(&domain_->fid);
  if (fabric_) fi_close(&fabric_->fid);
  if (info_) fi_freeinfo(info_);
}

void RawFiPeer::vanish() {
  if (ep_) fi_close(&ep_->fid);
  ep_ = nullptr;
  closed_ = true;
}

bool RawFiPeer::send_bytes(const void* data, size_t len) {
  for (int tries = 0; tries < 100000 && ep_; ++tries) {
    const ssize_t r = len <= info_->tx_attr->inject_size ? fi_inject(ep_, data, len, 0)
                                                           : fi_send(ep_, data, len, nullptr, 0, nullptr);
    if (r == 0) return true;
    if (r != -FI_EAGAIN) return false;
    progress();
  }
  return false;
}

bool RawFiPeer::send_message(const wire::WireMessage& m) {
  const auto bytes = wire::encode_wire_message(m);
  return send_bytes(bytes.data(), bytes.size());
}

std::optional<Errc> RawFiPeer::import(const RdmaCookie& cookie, Deadline deadline) {
  const uint64_t request = next_request_++;
  if (!send_message(wire::WireMessage{wire::WireOp::kImportRequest, Errc::kOk, request, cookie})) {
    return std::nullopt;
  }
  while (!deadline.expired() && !closed_) {
    progress();
    for (const auto& r : replies_) {
      if (r.request == request) return r.status;
    }
  }
  return std::nullopt;
}

bool RawFiPeer::write(uint64_t key, uint64_t offset, const void* src, size_t len,
                      const wire::WriteNotice& notice) {
  bool written = false;
  for (int tries = 0; tries < 100000 && ep_ && !written; ++tries) {
    ssize_t r;
    if (len <= info_->tx_attr->inject_size) {
      r = fi_inject_write(ep_, src, len, 0, offset, key);
    } else {
      if (staged_.size() <= writes_posted_) staged_.emplace_back(static_cast<const std::byte*>(src),
                                                                 static_cast<const std::byte*>(src) + len);
      r = fi_write(ep_, staged_.back().data(), len, nullptr, 0, offset, key, reinterpret_cast<void*>(kWriteTag));
      if (r == 0) ++writes_posted_;
    }
    if (r == 0) written = true;
    else if (r != -FI_EAGAIN) return false;
    else progress();
  }
  if (!written) return false;
  const auto message = wire::encode_notice_message(notice);
  return send_bytes(message.data(), message.size());
}

void RawFiPeer::progress() {
  fi_cq_data_entry entries[16];
  const ssize_t n = fi_cq_read(cq_, entries, 16);
  for (ssize_t i = 0; i < n; ++i) {
    const auto tag = reinterpret_cast<uintptr_t>(entries[i].op_context);
    if (tag == kWriteTag) {
      ++writes_done_;
    } else if ((entries[i].flags & FI_RECV) && tag >= 1 && tag <= kSlots) {
      const std::byte* slot = receive_.data() + (tag - 1) * kSlotBytes;
      if (auto m = wire::decode_wire_message(slot, entries[i].len)) {
        if (replies_.size() < 64) replies_.push_back(m.value());
        highest_reply_ = std::max(highest_reply_, m->request);
      }
      if (deaf_) {
        idle_slots_.push_back(entries[i].op_context);
      } else if (ep_) {
        (void)fi_recv(ep_, const_cast<std::byte*>(slot), kSlotBytes, nullptr, 0, entries[i].op_context);
      }
    }
  }
  if (n == -FI_EAVAIL) {
    fi_cq_err_entry err{};
    if (fi_cq_readerr(cq_, &err, 0) == 1 && reinterpret_cast<uintptr_t>(err.op_context) == kWriteTag) ++writes_done_;
    closed_ = true;
  }
  uint32_t event = 0;
  fi_eq_cm_entry entry{};
  const ssize_t e = fi_eq_read(eq_, &event, &entry, sizeof entry, 0);
  if ((e > 0 && event == FI_SHUTDOWN) || e == -FI_EAVAIL) closed_ = true;
  if (e == -FI_EAVAIL) {
    fi_eq_err_entry err{};
    (void)fi_eq_readerr(eq_, &err, 0);
  }
}

void RawFiPeer::set_deaf(bool deaf) {
  deaf_ = deaf;
  if (deaf_ || !ep_) return;
  for (void* context : idle_slots_) {
    const auto slot = reinterpret_cast<uintptr_t>(context) - 1;
    (void)fi_recv(ep_, receive_.data() + slot * kSlotBytes, kSlotBytes, nullptr, 0, context);
  }
  idle_slots_.clear();
}

bool RawFiPeer::await_reply(uint64_t request, Deadline deadline) {
  while (highest_reply_ < request && !closed_ && !deadline.expired()) progress();
  return highest_reply_ >= request;
}

bool RawFiPeer::wait_closed(Deadline deadline) {
  while (!closed_ && !deadline.expired()) progress();
  return closed_;
}

bool RawFiPeer::wait_writes(Deadline deadline) {
  while (writes_done_ < writes_posted_ && !deadline.expired()) progress();
  return writes_done_ >= writes_posted_;
}

}  // namespace clan::test
