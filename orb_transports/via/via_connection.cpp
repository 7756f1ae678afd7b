#include "orb_transports/via/via_connection.hpp"

#include <cstdlib>
#include <cstring>

#include "clan_emul/error_detail.hpp"
#include "orb_transports/common/fabric.hpp"
#include "orb_transports/common/omni_time.hpp"
#include "orb_transports/via/via_endpoint.hpp"

OMNI_USING_NAMESPACE(omni)

namespace clanorb {

namespace {

constexpr size_t kDescriptorBytes = VIP_DESCRIPTOR_ALIGNMENT;
static_assert(sizeof(VIP_DESCRIPTOR) <= kDescriptorBytes);
// The largest message: omniORB's chunks are split into messages this big.
constexpr size_t kBufferBytes = 32 * 1024;
constexpr size_t kMinBuffers = 2, kMaxBuffers = 64;
static_assert(kBufferBytes % kDescriptorBytes == 0);  // aligned_alloc wants a multiple

// A deadline as a VIPL timeout in milliseconds, rounded up.
VIP_ULONG timeout_ms(clan::Deadline d) {
  const int ms = d.remaining_ms();
  return ms < 0 ? VIP_INFINITE : static_cast<VIP_ULONG>(ms);
}
VIP_ULONG timeout_ms(const omni_time_t& deadline) {
  uint64_t now = 0;  // one clock read for both the conversion and what is left
  const clan::Deadline d = to_deadline(deadline, &now);
  if (d.is_never()) return VIP_INFINITE;
  const auto left = d.when() - clan::Clock::time_point(std::chrono::nanoseconds(now));
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return ms <= 0 ? 0 : ms > 0x7fffffff ? 0x7fffffff : static_cast<VIP_ULONG>(ms);
}

}  // namespace

ViaConnection::ViaConnection(std::shared_ptr<ViaNic> nic, ViaEndpoint* endpoint)
    : MonitoredConnection(endpoint), nic_(std::move(nic)), via_endpoint_(endpoint) {}

bool ViaConnection::open() {
  // -ORBclanRingBytes of receive buffers.
  buffer_bytes_ = kBufferBytes;
  buffers_ = fabric_options().ring_bytes / kBufferBytes;
  buffers_ = buffers_ < kMinBuffers ? kMinBuffers : buffers_ > kMaxBuffers ? kMaxBuffers : buffers_;
  const size_t own_bytes = (buffers_ + 1) * kDescriptorBytes + buffer_bytes_;
  VIP_NIC_HANDLE nic = nic_->handle();
  VIP_MEM_ATTRIBUTES ma{nic_->ptag(), VIP_FALSE, VIP_FALSE};
  void* p = nullptr;
  clan::clear_error();
  VIP_RETURN r = VipClanAllocMem(nic, static_cast<VIP_ULONG>(buffers_ * buffer_bytes_), &p);
  const char* what = "VipClanAllocMem";
  if (r == VIP_SUCCESS) {
    rx_mem_ = static_cast<std::byte*>(p);
    r = VipRegisterMem(nic, rx_mem_, static_cast<VIP_ULONG>(buffers_ * buffer_bytes_), &ma, &rx_mh_);
    what = "VipRegisterMem";
  }
  if (r == VIP_SUCCESS) {
    own_mem_ = static_cast<std::byte*>(std::aligned_alloc(kDescriptorBytes, own_bytes));
    r = own_mem_ ? VipRegisterMem(nic, own_mem_, static_cast<VIP_ULONG>(own_bytes), &ma, &own_mh_)
                 : VIP_ERROR_RESOURCE;
    what = own_mem_ ? "VipRegisterMem" : "allocating descriptors";
  }
  if (r == VIP_SUCCESS) {
    VIP_VI_ATTRIBUTES a{};
    a.ReliabilityLevel = VIP_SERVICE_RELIABLE_DELIVERY;
    a.MaxTransferSize = static_cast<VIP_ULONG>(buffer_bytes_);
    a.Ptag = nic_->ptag();
    r = VipCreateVi(nic, &a, nullptr, via_endpoint_ ? via_endpoint_->cq() : nullptr, &vi_);
    what = "VipCreateVi";
  }
  // Not armed until omniORB asks (setSelectable).
  if (r == VIP_SUCCESS && via_endpoint_) {
    r = VipClanCQNotify(vi_, VIP_FALSE);
    what = "VipClanCQNotify";
  }
  if (r == VIP_SUCCESS) {
    const size_t dma = fabric_options().dma_threshold;
    VIP_CLAN_VI_ATTRIBUTES x{};
    x.DeferSends = VIP_TRUE;
    x.SplitRequests = VIP_FALSE;
    x.TransferMode = dma == 0 ? VIP_CLAN_TRANSFER_PIO : VIP_CLAN_TRANSFER_AUTO;
    x.PioThreshold = static_cast<VIP_ULONG>(dma == 0 ? buffer_bytes_ : dma - 1);
    r = VipClanSetViAttributes(vi_, &x);
    what = "VipClanSetViAttributes";
  }
  rx_state_.assign(buffers_, kEmpty);
  if (r != VIP_SUCCESS) {
    omniORB::logger l;
    l << "giop:via: cannot set up a connection: " << what << ": " << via_failure(r).c_str() << "\n";
    return false;
  }
  if (via_endpoint_) via_endpoint_->attach(vi_, source());
  return true;
}

bool ViaConnection::post_receives() {
  std::lock_guard lock(rx_mu_);
  for (size_t i = 0; i < buffers_; ++i) {
    if (!post_receive(i)) {
      omniORB::logger l;
      l << "giop:via: cannot set up a connection: VipPostRecv failed\n";
      return false;
    }
  }
  return true;
}

ViaConnection::~ViaConnection() {
  if (via_endpoint_ && vi_) via_endpoint_->detach(vi_);
  detach_from_endpoint();
  VIP_NIC_HANDLE nic = nic_->handle();
  if (vi_) {
    VipDisconnect(vi_);  // fails harmlessly if never connected or already down
    // Receives are posted only while connected and Disconnect flushes them,
    // so this succeeds; if not, say so rather than leak silently.
    if (VIP_RETURN r = VipDestroyVi(vi_); r != VIP_SUCCESS) {
      omniORB::logger l;
      l << "giop:via: cannot destroy a VI (" << via_error_name(r) << "): its memory stays allocated\n";
      return;
    }
  }
  if (rx_mh_) VipDeregisterMem(nic, rx_mem_, rx_mh_);
  if (rx_mem_) VipClanFreeMem(nic, rx_mem_);
  if (own_mh_) VipDeregisterMem(nic, own_mem_, own_mh_);
  std::free(own_mem_);
}

void ViaConnection::set_addresses(std::string mine, std::string peer) {
  my_address_ = std::move(mine);
  peer_address_ = std::move(peer);
}

VIP_DESCRIPTOR* ViaConnection::descriptor(size_t i) const {
  return reinterpret_cast<VIP_DESCRIPTOR*>(own_mem_ + i * kDescriptorBytes);
}

std::byte* ViaConnection::buffer(size_t i) const { return rx_mem_ + i * buffer_bytes_; }

std::byte* ViaConnection::send_buffer() const { return own_mem_ + (buffers_ + 1) * kDescriptorBytes; }

void ViaConnection::repost_consumed() {
  // Consumed buffers are the unposted_ ones before next_rx_, in order. A
  // failure means the VI is broken: Recv learns it from VipRecvWait. Not
  // after Shutdown: a receive posted on the disconnected (idle) VI would
  // stay posted, and VIPL cannot destroy a VI with receives posted.
  if (shut_down_) return;
  for (; unposted_ != 0; --unposted_) post_receive((next_rx_ + buffers_ - unposted_) % buffers_);
}

bool ViaConnection::post_receive(size_t i) {
  VIP_DESCRIPTOR* d = descriptor(i);
  std::memset(d, 0, sizeof *d);
  d->CS.SegCount = 1;
  d->CS.Length = static_cast<VIP_UINT32>(buffer_bytes_);
  d->DS[0].Local.Data.Address = buffer(i);
  d->DS[0].Local.Handle = rx_mh_;
  d->DS[0].Local.Length = static_cast<VIP_UINT32>(buffer_bytes_);
  rx_state_[i] = kEmpty;
  return VipPostRecv(vi_, d, own_mh_) == VIP_SUCCESS;
}

void ViaConnection::mark(VIP_DESCRIPTOR* d, bool ok) {
  const auto off = reinterpret_cast<std::byte*>(d) - own_mem_;
  if (off < 0 || static_cast<size_t>(off) >= buffers_ * kDescriptorBytes) return;  // not ours
  rx_state_[static_cast<size_t>(off) / kDescriptorBytes] = ok ? kDone : kFailed;
}

void ViaConnection::harvest() {
  VIP_DESCRIPTOR* d = nullptr;
  for (;;) {
    VIP_RETURN r = VipRecvDone(vi_, &d);
    if (r == VIP_SUCCESS) {
      mark(d, true);
    } else if (r == VIP_DESCRIPTOR_ERROR) {
      mark(d, false);
    } else {
      return;
    }
  }
}

bool ViaConnection::readable() {
  // Called by the monitor while another thread may be in Recv: look, never
  // dequeue. A message taken already but not consumed counts too.
  {
    std::lock_guard lock(rx_mu_);
    if (rx_state_[next_rx_] != kEmpty) return true;
  }
  VIP_BOOLEAN ready = VIP_FALSE;
  return VipClanRecvReady(vi_, &ready) == VIP_SUCCESS && ready != VIP_FALSE;
}

void ViaConnection::notify_to(clan::EventQueue* queue, uint32_t) {
  if (via_endpoint_) VipClanCQNotify(vi_, queue ? VIP_TRUE : VIP_FALSE);
}

bool ViaConnection::wait_readable(clan::Deadline deadline) {
  // Peek, by the thread that owns the connection for reading.
  {
    std::lock_guard lock(rx_mu_);
    harvest();
    if (rx_state_[next_rx_] != kEmpty) return true;
    repost_consumed();
  }
  VIP_DESCRIPTOR* d = nullptr;
  VIP_RETURN r = VipRecvWait(vi_, timeout_ms(deadline), &d);
  std::lock_guard lock(rx_mu_);
  if (r == VIP_SUCCESS || r == VIP_DESCRIPTOR_ERROR) mark(d, r == VIP_SUCCESS);
  // A broken VI is readable: Recv reports the error.
  return rx_state_[next_rx_] != kEmpty || r == VIP_INVALID_STATE;
}

int ViaConnection::Recv(void* buf, size_t sz, const omni_time_t& deadline) {
  auto* out = static_cast<std::byte*>(buf);
  size_t got = 0;
  std::unique_lock lock(rx_mu_);
  while (got < sz) {
    if (rx_state_[next_rx_] == kEmpty && got != 0) {
      harvest();  // block only for the first message: take what is there
      if (rx_state_[next_rx_] == kEmpty) break;
    }
    if (rx_state_[next_rx_] == kEmpty) {
      // About to wait: a good moment to give the peer its credits back.
      repost_consumed();
      lock.unlock();
      VIP_DESCRIPTOR* d = nullptr;
      VIP_RETURN r = VipRecvWait(vi_, timeout_ms(deadline), &d);
      lock.lock();
      if (r == VIP_SUCCESS || r == VIP_DESCRIPTOR_ERROR) {
        mark(d, r == VIP_SUCCESS);
        continue;
      }
      return r == VIP_TIMEOUT ? 0 : -1;  // VIP_INVALID_STATE: shut down or broken
    }
    if (rx_state_[next_rx_] == kFailed) {
      if (got != 0) break;  // the error shows on the next call
      return -1;
    }
    const VIP_DESCRIPTOR* d = descriptor(next_rx_);
    // Length is written by the library after checking it against the
    // buffer, into memory no peer can write; checked again all the same.
    const size_t len = d->CS.Length <= buffer_bytes_ && d->CS.Length >= rx_off_ ? d->CS.Length : rx_off_;
    const size_t n = sz - got < len - rx_off_ ? sz - got : len - rx_off_;
    std::memcpy(out + got, buffer(next_rx_) + rx_off_, n);
    got += n;
    rx_off_ += n;
    if (rx_off_ == len) {
      // The whole message is out: the buffer goes back to the peer as a
      // credit, later, off the critical path (before we wait or after our
      // next send), or now if half the credits are out.
      rx_state_[next_rx_] = kEmpty;
      next_rx_ = (next_rx_ + 1) % buffers_;
      rx_off_ = 0;
      if (++unposted_ >= buffers_ / 2) repost_consumed();
    }
  }
  return static_cast<int>(got);
}

int ViaConnection::Send(void* buf, size_t sz, const omni_time_t& deadline) {
  if (sz == 0) return 0;
  VIP_DESCRIPTOR* sd = descriptor(buffers_);
  VIP_DESCRIPTOR* done = nullptr;
  if (send_pending_) {
    // An earlier Send timed out waiting for a credit: its message must go
    // first, and the buffer is still in use.
    VIP_RETURN r = VipSendWait(vi_, timeout_ms(deadline), &done);
    if (r == VIP_TIMEOUT) return 0;
    if (r != VIP_SUCCESS) return -1;
    send_pending_ = false;
  }
  const size_t n = sz < buffer_bytes_ ? sz : buffer_bytes_;
  std::byte* sb = send_buffer();
  std::memcpy(sb, buf, n);
  std::memset(sd, 0, sizeof *sd);
  sd->CS.SegCount = 1;
  sd->CS.Length = static_cast<VIP_UINT32>(n);
  sd->DS[0].Local.Data.Address = sb;
  sd->DS[0].Local.Handle = own_mh_;
  sd->DS[0].Local.Length = static_cast<VIP_UINT32>(n);
  if (VipPostSend(vi_, sd, own_mh_) != VIP_SUCCESS) return -1;
  VIP_RETURN r = VipSendWait(vi_, timeout_ms(deadline), &done);
  if (r == VIP_SUCCESS) {
    // Our message is out: return the peer's credits now, off its path.
    std::lock_guard lock(rx_mu_);
    repost_consumed();
    return static_cast<int>(n);
  }
  if (r == VIP_TIMEOUT) {
    send_pending_ = true;
    return 0;
  }
  return -1;
}

void ViaConnection::Shutdown() {
  // Breaks the VI: our blocked Recv/Send return errors, the peer sees the
  // connection close once it has read what we sent.
  {
    std::lock_guard lock(rx_mu_);
    shut_down_ = true;  // no reposting from now on (see repost_consumed)
  }
  VipDisconnect(vi_);
  notify_monitor();  // a closed connection looks readable
}

}  // namespace clanorb
