#include "via_bench/vipl_side.hpp"

#include <cstring>

namespace via_bench {
namespace {

VIP_DESCRIPTOR* fill(VIP_DESCRIPTOR* d, void* buf, VIP_MEM_HANDLE bh, uint32_t len, bool recv) {
  std::memset(d, 0, sizeof *d);
  d->CS.Length = len;
  if (len > 0 || recv) {
    d->CS.SegCount = 1;
    d->DS[0].Local.Data.Address = buf;
    d->DS[0].Local.Handle = bh;
    d->DS[0].Local.Length = len;
  }
  return d;
}

}  // namespace

clan::DmqConfig dmq_config() {
  clan::DmqConfig c;
  c.ring_bytes = 256 * 1024;  // as much as 4 x 64 KiB receive buffers
  c.max_message = kMaxMessage;
  return c;
}

VIP_DESCRIPTOR* ViplSide::main_recv(size_t k) {
  return fill(desc(kMainRecvDesc + k), rx_buf(k), rmh_, kMaxMessage, true);
}
VIP_DESCRIPTOR* ViplSide::main_send(size_t k, uint32_t len) {
  return fill(desc(kMainSendDesc + k), send_buf(k), lmh_, len, false);
}
VIP_DESCRIPTOR* ViplSide::cq_recv(size_t j) {
  return fill(desc(kCqRecvDesc + j), cq_rx_buf(j), cmh_, kCqRecvBytes, true);
}
VIP_DESCRIPTOR* ViplSide::cq_send(size_t i, uint32_t len) {
  return fill(desc(kCqSendDesc + i), cq_send_buf(i), lmh_, len, false);
}

int ViplSide::alloc(size_t bytes, unsigned char*& at, VIP_MEM_HANDLE& mh) {
  void* p = nullptr;
  VIP_MEM_ATTRIBUTES ma{ptag_, VIP_FALSE, VIP_FALSE};
  if (VipClanAllocMem(nic_, bytes, &p) != VIP_SUCCESS) return 1;
  at = static_cast<unsigned char*>(p);
  return VipRegisterMem(nic_, at, bytes, &ma, &mh) != VIP_SUCCESS ? 2 : 0;
}

// Steps 1-9: the NIC, the ptag, the three allocations (allocated, then
// registered), the CQ.
int ViplSide::open_nic(const std::string& nic_name) {
  if (VipOpenNic(nic_name.c_str(), &nic_) != VIP_SUCCESS) return 1;
  if (VipCreatePtag(nic_, &ptag_) != VIP_SUCCESS) return 2;
  if (int e = alloc(kLocalBytes, local_, lmh_)) return 2 + e;
  if (int e = alloc(kRecvBuffers * kMaxMessage, rx_, rmh_)) return 4 + e;
  if (int e = alloc(2 * kCqMax * kCqRecvBytes, cq_rx_, cmh_)) return 6 + e;
  if (VipCreateCQ(nic_, 4 * kCqMax, &cq_) != VIP_SUCCESS) return 9;
  return 0;
}

VIP_VI_ATTRIBUTES ViplSide::vi_attributes() const {
  VIP_VI_ATTRIBUTES a{};
  a.ReliabilityLevel = VIP_SERVICE_RELIABLE_DELIVERY;
  a.MaxTransferSize = kMaxMessage;
  a.Ptag = ptag_;
  return a;
}

int ViplSide::open_main(const std::string& nic_name) {
  if (int e = open_nic(nic_name)) return e;
  VIP_VI_ATTRIBUTES a = vi_attributes();
  if (VipCreateVi(nic_, &a, nullptr, nullptr, &vi_) != VIP_SUCCESS) return 10;
  // Posted before the connection: they travel in the handshake.
  for (size_t k = 0; k < kRecvBuffers; ++k) {
    if (VipPostRecv(vi_, main_recv(k), lmh_) != VIP_SUCCESS) return 11;
  }
  return 0;
}

int ViplSide::open_cq(const std::string& nic_name) {
  if (int e = open_nic(nic_name)) return e;
  VIP_VI_ATTRIBUTES a = vi_attributes();
  cvis_.resize(kCqMax);
  for (size_t i = 0; i < kCqMax; ++i) {
    if (VipCreateVi(nic_, &a, nullptr, cq_, &cvis_[i]) != VIP_SUCCESS) return 12;
    index_[cvis_[i]] = i;
    for (size_t j = 0; j < 2; ++j) {
      if (VipPostRecv(cvis_[i], cq_recv(2 * i + j), lmh_) != VIP_SUCCESS) return 13;
    }
  }
  return 0;
}

void ViplSide::close() {
  if (nic_) VipCloseNic(nic_);
  nic_ = nullptr;
}

bool set_mode(VIP_VI_HANDLE vi, uint32_t mode) {
  VIP_CLAN_VI_ATTRIBUTES x{VIP_TRUE, VIP_FALSE, mode, 1024, VIP_CLAN_WAIT_DEFAULT};
  return VipClanSetViAttributes(vi, &x) == VIP_SUCCESS;
}

std::string disc_of(size_t i) { return i == kCqMax ? std::string("main") : "q" + std::to_string(i); }

Address::Address(const std::string& host, const std::string& disc) {
  get()->HostAddressLen = static_cast<VIP_UINT16>(host.size());
  get()->DiscriminatorLen = static_cast<VIP_UINT16>(disc.size());
  std::memcpy(get()->HostAddress, host.data(), host.size());
  std::memcpy(get()->HostAddress + host.size(), disc.data(), disc.size());
}

void put_seq(unsigned char* buf, uint64_t size, uint64_t seq) {
  if (size >= 8) std::memcpy(buf, &seq, 8);
}

bool seq_ok(const void* buf, uint64_t size, uint64_t seq) {
  if (size < 8) return true;
  uint64_t v;
  std::memcpy(&v, buf, 8);
  return v == seq;
}

}  // namespace via_bench
