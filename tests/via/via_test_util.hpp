// Helpers for the VIPL tests: a runtime directory per test, a NIC with a
// ptag and registered CLAN memory, addresses, and an in-process VI pair.
#pragma once

#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "via/vipl.h"

namespace via_test {

// Every test gets its own OOB runtime directory (inherited by forked children).
struct RuntimeDir {
  std::string path;
  RuntimeDir() {
    char tmpl[] = "/tmp/clan-via-XXXXXX";
    path = mkdtemp(tmpl);
    setenv("CLAN_RUNTIME_DIR", path.c_str(), 1);
  }
  ~RuntimeDir() { std::filesystem::remove_all(path); }
};

struct Address {
  alignas(8) unsigned char bytes[VIP_CLAN_NET_ADDRESS_BYTES] = {};
  VIP_NET_ADDRESS* get() { return reinterpret_cast<VIP_NET_ADDRESS*>(bytes); }
  Address(const std::string& host, const std::string& disc) {
    get()->HostAddressLen = static_cast<VIP_UINT16>(host.size());
    get()->DiscriminatorLen = static_cast<VIP_UINT16>(disc.size());
    std::memcpy(get()->HostAddress, host.data(), host.size());
    std::memcpy(get()->HostAddress + host.size(), disc.data(), disc.size());
  }
};

inline VIP_VI_ATTRIBUTES vi_attributes(VIP_PROTECTION_HANDLE ptag,
                                       VIP_RELIABILITY_LEVEL level = VIP_SERVICE_RELIABLE_DELIVERY) {
  VIP_VI_ATTRIBUTES a{};
  a.ReliabilityLevel = level;
  a.MaxTransferSize = 64 * 1024;
  a.Ptag = ptag;
  return a;
}

// A NIC, a ptag, and one block of CLAN memory registered under it: descriptors
// from the front, buffers after.
struct Node {
  VIP_NIC_HANDLE nic = nullptr;
  VIP_PROTECTION_HANDLE ptag = nullptr;
  unsigned char* mem = nullptr;
  VIP_MEM_HANDLE mh = 0;
  static constexpr size_t kBytes = 1 << 20;
  static constexpr size_t kDescriptors = 64;
  static constexpr size_t kBuffer = 8192;

  // With a config, the NIC's resident set is its (VipClanOpenNic).
  bool open(const char* name, const VIP_CLAN_NIC_CONFIG* config = nullptr) {
    const VIP_RETURN opened =
        config ? VipClanOpenNic(name, config, &nic) : VipOpenNic(name, &nic);
    if (opened != VIP_SUCCESS) return false;
    if (VipCreatePtag(nic, &ptag) != VIP_SUCCESS) return false;
    void* p = nullptr;
    if (VipClanAllocMem(nic, kBytes, &p) != VIP_SUCCESS) return false;
    mem = static_cast<unsigned char*>(p);
    VIP_MEM_ATTRIBUTES ma{ptag, VIP_FALSE, VIP_FALSE};
    return VipRegisterMem(nic, mem, kBytes, &ma, &mh) == VIP_SUCCESS;
  }
  void close() {
    if (nic) VipCloseNic(nic);
    nic = nullptr;
  }
  ~Node() { close(); }
  VIP_DESCRIPTOR* desc(size_t i) {
    return reinterpret_cast<VIP_DESCRIPTOR*>(mem + i * 64);
  }
  unsigned char* buffer(size_t i) { return mem + kDescriptors * 64 + i * kBuffer; }
  // A one-segment descriptor over buffer(i) (len bytes).
  VIP_DESCRIPTOR* make(size_t i, uint32_t len, uint32_t control = 0, uint32_t imm = 0) {
    VIP_DESCRIPTOR* d = desc(i);
    std::memset(d, 0, sizeof *d);
    d->CS.SegCount = 1;
    d->CS.Control = static_cast<VIP_UINT16>(control);
    d->CS.ImmediateData = imm;
    d->CS.Length = len;
    d->DS[0].Local.Data.Address = buffer(i);
    d->DS[0].Local.Handle = mh;
    d->DS[0].Local.Length = len;
    return d;
  }
};

// The server's side of a connection made in this process: it listens first
// (a zero-timeout wait), so no request is refused, then accepts the first
// request on `svi` on a thread of its own. result() joins that thread:
// VIP_SUCCESS once accepted.
class AcceptOne {
 public:
  AcceptOne(Node& server, VIP_VI_HANDLE svi, const std::string& name, const std::string& disc)
      : local_(name, disc) {
    Address out("", "");
    VIP_VI_ATTRIBUTES ra{};
    VIP_CONN_HANDLE conn = nullptr;
    if (VipConnectWait(server.nic, local_.get(), 0, out.get(), &ra, &conn) != VIP_TIMEOUT) return;
    thread_ = std::thread([this, &server, svi] {
      Address o("", "");
      VIP_VI_ATTRIBUTES a{};
      VIP_CONN_HANDLE c = nullptr;
      if (VipConnectWait(server.nic, local_.get(), 10000, o.get(), &a, &c) == VIP_SUCCESS) {
        accepted_ = VipConnectAccept(c, svi);
      }
    });
  }
  ~AcceptOne() { result(); }
  AcceptOne(const AcceptOne&) = delete;
  AcceptOne& operator=(const AcceptOne&) = delete;
  bool listening() const { return thread_.joinable(); }
  VIP_RETURN result() {
    if (thread_.joinable()) thread_.join();
    return accepted_;
  }

 private:
  Address local_;
  VIP_RETURN accepted_ = VIP_ERROR_RESOURCE;
  std::thread thread_;
};

// Connects client VI -> server VI, both in this process.
inline bool connect_pair(Node& server, VIP_VI_HANDLE svi, VIP_VI_HANDLE cvi,
                         const std::string& server_name, const std::string& disc = "d0") {
  AcceptOne accept(server, svi, server_name, disc);
  if (!accept.listening()) return false;
  Address client_local("", "c");
  Address remote(server_name, disc);
  VIP_VI_ATTRIBUTES ra{};
  VIP_RETURN r = VipConnectRequest(cvi, client_local.get(), remote.get(), 10000, &ra);
  return accept.result() == VIP_SUCCESS && r == VIP_SUCCESS;
}

// Two nodes in this process with a VI each (reliable delivery); connect()
// joins the client's VI to the server's.
struct ViPair {
  RuntimeDir dir;
  Node server, client;
  VIP_VI_HANDLE svi = nullptr, cvi = nullptr;
  std::string server_name;
  // False if a NIC, its memory or a VI could not be made.
  bool open(const char* server_nic, const char* client_nic) {
    server_name = server_nic;
    if (!server.open(server_nic) || !client.open(client_nic)) return false;
    auto sa = vi_attributes(server.ptag);
    auto ca = vi_attributes(client.ptag);
    return VipCreateVi(server.nic, &sa, nullptr, nullptr, &svi) == VIP_SUCCESS &&
           VipCreateVi(client.nic, &ca, nullptr, nullptr, &cvi) == VIP_SUCCESS;
  }
  bool connect() { return connect_pair(server, svi, cvi, server_name); }
};

}  // namespace via_test
