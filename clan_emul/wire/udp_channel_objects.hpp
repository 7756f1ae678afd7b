// The libfabric objects of a UdpChannel, shared by its set-up (udp_open.cpp)
// and its data path (udp_channel.cpp). Not part of the public API.
#pragma once

#include <rdma/fabric.h>

#include "clan_emul/wire/udp_channel.hpp"

namespace clan::wire {

struct UdpChannel::Objects {
  fi_info* info = nullptr;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_av* av = nullptr;
  fid_cq* cq = nullptr;
  fid_ep* ep = nullptr;
  Objects() = default;
  Objects(const Objects&) = delete;
  Objects& operator=(const Objects&) = delete;
  ~Objects();  // closes what was opened, the endpoint first
};

}  // namespace clan::wire
