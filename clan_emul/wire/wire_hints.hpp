// What the wire asks libfabric for: a reliable connected endpoint
// (FI_EP_MSG) with RMA writes, and sends ordered after them.
#pragma once

#include <rdma/fabric.h>

#include <cstring>
#include <memory>
#include <string>

#include "clan_emul/wire/fi_loader.hpp"

namespace clan::wire {

inline constexpr uint32_t kFiVersion = FI_VERSION(1, 17);

struct HintsDeleter {
  void operator()(fi_info* i) const { clan_fi_freeinfo(i); }
};
using HintsPtr = std::unique_ptr<fi_info, HintsDeleter>;

inline HintsPtr make_hints(const std::string& provider) {
  HintsPtr h(clan_fi_allocinfo());
  if (!h) return h;
  h->ep_attr->type = FI_EP_MSG;
  h->caps = FI_MSG | FI_RMA | FI_WRITE | FI_REMOTE_WRITE | FI_SEND | FI_RECV;
  h->mode = 0;
  // Offsets, application-chosen keys, nothing to register locally.
  h->domain_attr->mr_mode = 0;
  h->domain_attr->threading = FI_THREAD_SAFE;
  h->tx_attr->msg_order = FI_ORDER_WAW | FI_ORDER_SAW;
  h->fabric_attr->prov_name = strdup(provider.c_str());
  return h;
}

}  // namespace clan::wire
