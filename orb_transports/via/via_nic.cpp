#include "orb_transports/via/via_nic.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include <omniORB4/CORBA.h>

#include "clan_emul/error_detail.hpp"
#include "orb_transports/common/fabric.hpp"

namespace clanorb {

namespace {
std::mutex nic_mu;
std::shared_ptr<ViaNic> the_nic;


// -ORBclanWaitMode, as the NIC's VIA attribute; CLAN_WAIT_MODE, when set,
// wins (as it does over giop:clan's and giop:otp's), so it is left alone.
VIP_RETURN set_wait_mode(VIP_NIC_HANDLE nic) {
  if (const char* env = std::getenv("CLAN_WAIT_MODE"); env && *env) return VIP_SUCCESS;
  VIP_CLAN_NIC_ATTRIBUTES a{};
  VIP_RETURN r = VipClanQueryNicAttributes(nic, &a);
  if (r != VIP_SUCCESS) return r;
  switch (fabric_options().wait_mode) {
    case clan::WaitMode::kAdaptive: a.WaitMode = VIP_CLAN_WAIT_ADAPTIVE; break;
    case clan::WaitMode::kPoll: a.WaitMode = VIP_CLAN_WAIT_POLL; break;
    case clan::WaitMode::kBlock: a.WaitMode = VIP_CLAN_WAIT_BLOCK; break;
  }
  return VipClanSetNicAttributes(nic, &a);
}

// VipClanOpenNic with the resident set of -ORBclanFrames, -ORBclanRemapNs,
// -ORBclanReplacement, as the fabric's NIC has it (each connection's VI is an
// endpoint); `wired`: with a wire and a tcp listener at -ORBclanHost.
VIP_RETURN open_nic(const std::string& name, bool wired, VIP_NIC_HANDLE* nic) {
  const FabricOptions& o = fabric_options();
  const std::string listen = wired ? host_listen_address(o) : std::string();
  VIP_CLAN_NIC_CONFIG config{};
  config.Frames = o.frames;
  config.RemapNs = o.remap_ns;
  config.Replacement = o.replacement == static_cast<uint32_t>(clan::Replacement::kRandom)
                           ? VIP_CLAN_REPLACEMENT_RANDOM
                           : VIP_CLAN_REPLACEMENT_LRU;
  config.WireListen = listen.c_str();
  config.WireProvider = o.provider.c_str();
  config.OobListen = listen.c_str();
  clan::clear_error();
  return VipClanOpenNic(name.c_str(), &config, nic);
}

// Opens the NIC, across hosts when -ORBclanHost is given. Other hosts are a
// bonus: if the NIC opens only without its wire, it serves this host (logged).
VIP_RETURN open_nic_for_hosts(const std::string& name, VIP_NIC_HANDLE* nic, bool& wired) {
  wired = !fabric_options().host.empty();
  VIP_RETURN r = open_nic(name, wired, nic);
  if (r == VIP_SUCCESS || !wired) return r;
  const std::string why = via_failure(r);
  wired = false;
  r = open_nic(name, false, nic);
  if (r == VIP_SUCCESS) log_this_host_only("giop:via", name, why);
  return r;
}

}  // namespace

std::string ViaNic::published_reach() {
  std::lock_guard lock(nic_mu);
  return the_nic ? the_nic->reach_ : std::string();
}

std::shared_ptr<ViaNic> ViaNic::get(const std::string& node) {
  std::lock_guard lock(nic_mu);
  if (the_nic) {
    if (!node.empty() && node != the_nic->node()) {
      omniORB::logger l;
      l << "giop:via: this process is already VIA node '" << the_nic->node().c_str()
        << "'; cannot also be '" << node.c_str() << "'\n";
      return nullptr;
    }
    return the_nic;
  }
  const std::string name = node.empty() ? "via" + std::to_string(getpid()) : node;
  auto n = std::shared_ptr<ViaNic>(new ViaNic());
  n->node_ = name;
  bool wired = false;
  VIP_RETURN r = open_nic_for_hosts(name, &n->nic_, wired);
  // The NIC's PIO mapping cache keeps its default size: each VI keeps its own
  // peer's receive region mapped anyway, and a larger cache would keep the
  // memory of peers long gone.
  if (r == VIP_SUCCESS) r = set_wait_mode(n->nic_);
  if (r == VIP_SUCCESS) r = VipCreatePtag(n->nic_, &n->ptag_);
  VIP_UINT16 oob_port = 0;
  if (r == VIP_SUCCESS && wired) r = VipClanQueryNicOobPort(n->nic_, &oob_port);
  n->reach_ = reach_at(oob_port);
  if (r != VIP_SUCCESS) {
    omniORB::logger l;
    l << "giop:via: cannot open VIA NIC '" << name.c_str() << "': " << via_failure(r).c_str();
    if (clan::last_error_code() == clan::Errc::kAddressInUse) {
      l << "; giop:via needs a node name of its own, not giop:clan's or giop:otp's, nor another process's";
    }
    l << "\n";
    return nullptr;
  }
  the_nic = n;
  return n;
}

void ViaNic::release() {
  std::lock_guard lock(nic_mu);
  if (the_nic && omniORB::trace(1)) {
    VIP_CLAN_NIC_STATS s{};
    if (VipClanQueryNicStats(the_nic->nic_, &s) == VIP_SUCCESS && s.Remaps > 0) {
      omniORB::logger l;
      l << "giop:via: NIC '" << the_nic->node_.c_str() << "' made connections resident "
        << static_cast<unsigned long>(s.Remaps) << " times, evicting "
        << static_cast<unsigned long>(s.Evictions) << ", for want of frames (-ORBclanFrames "
        << fabric_options().frames << ")\n";
    }
  }
  the_nic.reset();
}

ViaNic::~ViaNic() {
  if (!nic_) return;
  if (ptag_) VipDestroyPtag(nic_, ptag_);
  VipCloseNic(nic_);
}

bool ViaNic::claim_port(uint16_t port) {
  std::lock_guard lock(mu_);
  return ports_.insert(port).second;
}

void ViaNic::free_port(uint16_t port) {
  std::lock_guard lock(mu_);
  ports_.erase(port);
}

ViaNetAddress::ViaNetAddress(const std::string& host, uint16_t port) {
  const std::string disc = port ? std::to_string(port) : "";
  VIP_NET_ADDRESS* a = get();
  const size_t h = host.size() < VIP_CLAN_MAX_HOST_ADDRESS ? host.size() : VIP_CLAN_MAX_HOST_ADDRESS;
  a->HostAddressLen = static_cast<VIP_UINT16>(h);
  a->DiscriminatorLen = static_cast<VIP_UINT16>(disc.size());
  std::memcpy(a->HostAddress, host.data(), h);
  std::memcpy(a->HostAddress + h, disc.data(), disc.size());
}

std::string ViaNetAddress::host() const {
  const auto* a = reinterpret_cast<const VIP_NET_ADDRESS*>(bytes);
  const size_t h = a->HostAddressLen < VIP_CLAN_MAX_HOST_ADDRESS ? a->HostAddressLen
                                                                 : VIP_CLAN_MAX_HOST_ADDRESS;
  return std::string(reinterpret_cast<const char*>(a->HostAddress), h);
}

std::string via_failure(VIP_RETURN r) {
  std::string s = via_error_name(r);
  if (r != VIP_SUCCESS && !clan::last_error_message().empty()) s += ": " + clan::last_error_message();
  return s;
}

const char* via_error_name(VIP_RETURN r) {
  switch (r) {
    case VIP_SUCCESS: return "VIP_SUCCESS";
    case VIP_NOT_DONE: return "VIP_NOT_DONE";
    case VIP_INVALID_PARAMETER: return "VIP_INVALID_PARAMETER";
    case VIP_ERROR_RESOURCE: return "VIP_ERROR_RESOURCE";
    case VIP_TIMEOUT: return "VIP_TIMEOUT";
    case VIP_REJECT: return "VIP_REJECT";
    case VIP_INVALID_RELIABILITY_LEVEL: return "VIP_INVALID_RELIABILITY_LEVEL";
    case VIP_INVALID_MTU: return "VIP_INVALID_MTU";
    case VIP_INVALID_QOS: return "VIP_INVALID_QOS";
    case VIP_INVALID_PTAG: return "VIP_INVALID_PTAG";
    case VIP_INVALID_RDMAREAD: return "VIP_INVALID_RDMAREAD";
    case VIP_DESCRIPTOR_ERROR: return "VIP_DESCRIPTOR_ERROR";
    case VIP_INVALID_STATE: return "VIP_INVALID_STATE";
    case VIP_ERROR_NAMESERVICE: return "VIP_ERROR_NAMESERVICE";
    case VIP_NO_MATCH: return "VIP_NO_MATCH";
    case VIP_NOT_REACHABLE: return "VIP_NOT_REACHABLE";
    case VIP_ERROR_NOT_SUPPORTED: return "VIP_ERROR_NOT_SUPPORTED";
  }
  return "unknown VIPL error";
}

}  // namespace clanorb
