// One side's VIPL resources on one NIC: either the main VI (latency,
// bandwidth) or a receive CQ over kCqMax VIs (the completion-queue test;
// one NIC cannot hold that many connected VIs beside the main one).
// Memory: `local` holds the descriptors and send buffers, `rx` the receive
// buffers (CLAN memory). The main VI's 4 receive buffers share one
// allocation, as do the CQ VIs', so with RevokeOnCompletion (the default) no
// cookie is ever reissued in these runs (another descriptor of the
// allocation is always still posted).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "via/vipl.h"
#include "via_bench/config.hpp"

namespace via_bench {

class ViplSide {
 public:
  // Each returns 0 or the number of the step that failed.
  int open_main(const std::string& nic_name);
  int open_cq(const std::string& nic_name);
  void close();

  VIP_NIC_HANDLE nic() const { return nic_; }
  VIP_VI_HANDLE vi() const { return vi_; }
  VIP_VI_HANDLE cq_vi(size_t i) const { return cvis_[i]; }
  VIP_CQ_HANDLE cq() const { return cq_; }
  VIP_MEM_HANDLE lmh() const { return lmh_; }
  size_t cq_index(VIP_VI_HANDLE vi) const { return index_.at(vi); }

  unsigned char* send_buf(size_t k) { return local_ + kSendOffset + k * kMaxMessage; }
  unsigned char* rx_buf(size_t k) { return rx_ + k * kMaxMessage; }

  // Descriptors, filled afresh for each post.
  VIP_DESCRIPTOR* main_recv(size_t k);
  VIP_DESCRIPTOR* main_send(size_t k, uint32_t len);
  VIP_DESCRIPTOR* cq_recv(size_t j);
  VIP_DESCRIPTOR* cq_send(size_t i, uint32_t len);
  // The buffer slot of a completed receive descriptor.
  size_t main_recv_slot(const VIP_DESCRIPTOR* d) const { return desc_index(d) - kMainRecvDesc; }
  size_t cq_recv_slot(const VIP_DESCRIPTOR* d) const { return desc_index(d) - kCqRecvDesc; }

 private:
  // Layout of `local`.
  static constexpr size_t kDescBytes = 64;
  static constexpr size_t kMainRecvDesc = 0;
  static constexpr size_t kMainSendDesc = kMainRecvDesc + kRecvBuffers;
  static constexpr size_t kCqRecvDesc = kMainSendDesc + kSendSlots;  // 2 per CQ VI
  static constexpr size_t kCqSendDesc = kCqRecvDesc + 2 * kCqMax;    // 1 per CQ VI
  static constexpr size_t kDescCount = kCqSendDesc + kCqMax;
  static constexpr size_t kSendOffset = ((kDescCount * kDescBytes + 4095) / 4096) * 4096;
  static constexpr size_t kCqSendOffset = kSendOffset + kSendSlots * kMaxMessage;
  static constexpr size_t kLocalBytes = kCqSendOffset + kCqMax * 64;
  static constexpr size_t kCqRecvBytes = 64;

  int open_nic(const std::string& nic_name);
  int alloc(size_t bytes, unsigned char*& at, VIP_MEM_HANDLE& mh);
  VIP_VI_ATTRIBUTES vi_attributes() const;
  VIP_DESCRIPTOR* desc(size_t i) { return reinterpret_cast<VIP_DESCRIPTOR*>(local_ + i * kDescBytes); }
  size_t desc_index(const VIP_DESCRIPTOR* d) const {
    return static_cast<size_t>((reinterpret_cast<const unsigned char*>(d) - local_) / kDescBytes);
  }
  unsigned char* cq_send_buf(size_t i) { return local_ + kCqSendOffset + i * 64; }
  unsigned char* cq_rx_buf(size_t j) { return cq_rx_ + j * kCqRecvBytes; }

  VIP_NIC_HANDLE nic_ = nullptr;
  VIP_PROTECTION_HANDLE ptag_ = nullptr;
  VIP_CQ_HANDLE cq_ = nullptr;  // receive CQ of the CQ VIs
  unsigned char* local_ = nullptr;
  unsigned char* rx_ = nullptr;
  unsigned char* cq_rx_ = nullptr;
  VIP_MEM_HANDLE lmh_ = 0, rmh_ = 0, cmh_ = 0;
  VIP_VI_HANDLE vi_ = nullptr;
  std::vector<VIP_VI_HANDLE> cvis_;
  std::unordered_map<VIP_VI_HANDLE, size_t> index_;
};

// Forces a VI's transfer mode (VIP_CLAN_TRANSFER_PIO, _DMA, _AUTO).
bool set_mode(VIP_VI_HANDLE vi, uint32_t mode);

// The discriminator of connection i: "q<i>" for a CQ VI, "main" for kCqMax.
std::string disc_of(size_t i);

// A VIPL network address: host name and discriminator.
class Address {
 public:
  Address(const std::string& host, const std::string& disc);
  VIP_NET_ADDRESS* get() { return reinterpret_cast<VIP_NET_ADDRESS*>(bytes_); }

 private:
  alignas(8) unsigned char bytes_[VIP_CLAN_NET_ADDRESS_BYTES] = {};
};

// Streams carry a sequence number in their first 8 bytes (if they have 8).
void put_seq(unsigned char* buf, uint64_t size, uint64_t seq);
bool seq_ok(const void* buf, uint64_t size, uint64_t seq);

}  // namespace via_bench
