#include "orb_transports/common/fabric.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <fstream>

#include <omniORB4/CORBA.h>

#include "clan_emul/error_detail.hpp"
#include "clan_emul/resident_set.hpp"

namespace clanorb {

FabricOptions& fabric_options() {
  static FabricOptions o;
  return o;
}

clan::NicConfig nic_config(const std::string& name, const FabricOptions& o) {
  clan::NicConfig nc;
  nc.name = name;
  nc.spin_budget = std::chrono::nanoseconds(o.spin_ns);
  nc.wait_mode = o.wait_mode;
  const uint32_t two_each = 2 * o.max_connections;
  nc.max_endpoints = o.max_connections;
  nc.max_imports = std::max(nc.max_imports, two_each);
  nc.max_regions = std::max(nc.max_regions, two_each);
  nc.max_tripwires = std::max(nc.max_tripwires, two_each);
  // Above the endpoints: the re-mapping thread's queue holds a source for
  // each, and a server's monitor one for each connection.
  nc.event_queue_capacity = std::max(nc.event_queue_capacity, std::bit_ceil(o.max_connections + 2));
  nc.frames = o.frames;
  nc.remap_cost = std::chrono::nanoseconds(o.remap_ns);
  nc.replacement = static_cast<clan::Replacement>(o.replacement);
  // Other hosts reach the NIC's wire at this host's address, on any port.
  nc.wire.listen = host_listen_address(o);
  nc.wire.provider = o.provider;
  return nc;
}

std::string host_listen_address(const FabricOptions& o) {
  return o.host.empty() ? std::string() : o.host + ":0";
}

std::string reach_at(uint16_t oob_port) {
  const std::string& host = fabric_options().host;
  if (oob_port == 0 || host.empty()) return "";
  return host + ":" + std::to_string(oob_port);
}

void log_this_host_only(const char* scheme, const std::string& name, const std::string& why) {
  omniORB::logger l;
  l << scheme << ": node '" << name.c_str() << "' serves this host only, its wire to other hosts failed: "
    << why.c_str() << "\n";
}

static std::mutex fabric_mu;
static std::shared_ptr<Fabric> the_fabric;

std::shared_ptr<Fabric> Fabric::get(const char* scheme, const std::string& node) {
  std::lock_guard lock(fabric_mu);
  if (the_fabric) {
    if (!node.empty() && node != the_fabric->node()) {
      omniORB::logger l;
      l << scheme << ": this process is already node '" << the_fabric->node().c_str()
        << "'; cannot also be '" << node.c_str() << "'\n";
      return nullptr;
    }
    return the_fabric;
  }
  const std::string name = node.empty() ? "orb" + std::to_string(getpid()) : node;
  clan::NicConfig nc = nic_config(name, fabric_options());
  auto nic = clan::Nic::open(nc);
  bool wired = !nc.wire.listen.empty();
  if (!nic && wired) {
    log_this_host_only(scheme, name, clan::error_message(nic.error()));
    nc.wire.listen.clear();
    wired = false;
    nic = clan::Nic::open(nc);
  }
  if (!nic) {
    omniORB::logger l;
    l << scheme << ": cannot open the NIC of node '" << name.c_str()
      << "': " << clan::error_message(nic.error()).c_str() << "\n";
    return nullptr;
  }
  clan::OobConfig oc;
  oc.node = name;
  if (wired) oc.listen = host_listen_address(fabric_options());
  auto oob = clan::OobManager::start(oc);
  if (!oob) {
    omniORB::logger l;
    l << scheme << ": cannot start node '" << name.c_str()
      << "': " << clan::error_message(oob.error()).c_str() << "\n";
    return nullptr;
  }
  auto f = std::shared_ptr<Fabric>(new Fabric());
  f->nic_ = std::move(nic.value());
  f->oob_ = std::move(oob.value());
  the_fabric = f;
  return f;
}

// Overcommit is worth knowing of: it costs a re-mapping per message to a
// connection that lost its frame (paper 004 sect. 6.4).
static void log_remaps(Fabric& f) {
  const clan::ResidentSetStats s = f.nic().resident_set_stats();
  if (s.remaps == 0 || !omniORB::trace(1)) return;
  omniORB::logger l;
  l << "giop:clan, giop:otp: NIC '" << f.node().c_str() << "' made connections resident "
    << static_cast<unsigned long>(s.remaps) << " times, evicting "
    << static_cast<unsigned long>(s.evictions) << ", for want of frames (-ORBclanFrames "
    << s.frames << ")\n";
}

void Fabric::release() {
  std::lock_guard lock(fabric_mu);
  if (the_fabric) log_remaps(*the_fabric);
  the_fabric.reset();
}

std::string Fabric::published_reach() {
  std::lock_guard lock(fabric_mu);
  return the_fabric ? the_fabric->reach() : std::string();
}

std::string Fabric::reach() const { return reach_at(oob_->listen_port()); }

const std::string& boot_id() {
  static const std::string id = [] {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string s;
    std::getline(in, s);
    return s;
  }();
  return id;
}

}  // namespace clanorb
