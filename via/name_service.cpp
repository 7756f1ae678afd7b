// The name service: host names are OOB node names, one address each, the
// name itself (reachability is known at connect time).
#include <cstring>

#include "via/internal.hpp"

using namespace via;

extern "C" {

VIP_RETURN VipNSInit(VIP_NIC_HANDLE NicHandle, VIP_PVOID) {
  NicImpl* n = nic_of(NicHandle);
  if (!n) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(n->mu);
  n->ns_ready = true;
  return VIP_SUCCESS;
}

VIP_RETURN VipNSShutdown(VIP_NIC_HANDLE NicHandle) {
  NicImpl* n = nic_of(NicHandle);
  if (!n) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(n->mu);
  if (!n->ns_ready) return VIP_ERROR_NAMESERVICE;
  n->ns_ready = false;
  return VIP_SUCCESS;
}

VIP_RETURN VipNSGetHostByName(VIP_NIC_HANDLE NicHandle, VIP_CHAR* Name, VIP_NET_ADDRESS* Address,
                              VIP_ULONG NameIndex) {
  NicImpl* n = nic_of(NicHandle);
  if (!n || !Name || !Address) return VIP_INVALID_PARAMETER;
  {
    std::lock_guard lock(n->mu);
    if (!n->ns_ready) return VIP_ERROR_NAMESERVICE;
  }
  // Host names are OOB node names: one address each, the name itself.
  size_t len = std::strlen(Name);
  if (NameIndex != 0 || len == 0 || len > VIP_CLAN_MAX_HOST_ADDRESS) return VIP_ERROR_NAMESERVICE;
  for (size_t i = 0; i < len; ++i) {
    char c = Name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return VIP_ERROR_NAMESERVICE;
  }
  Address->HostAddressLen = static_cast<VIP_UINT16>(len);
  Address->DiscriminatorLen = 0;
  std::memcpy(Address->HostAddress, Name, len);
  return VIP_SUCCESS;
}

}  // extern "C"
