#include "orb_transports/common/fabric.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <fstream>

#include <omniORB4/CORBA.h>

#include "clan_emul/error_detail.hpp"

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
  nc.max_imports = two_each;
  nc.max_regions = std::max(nc.max_regions, two_each);
  nc.max_tripwires = std::max(nc.max_tripwires, two_each);
  nc.event_queue_capacity = std::max(nc.event_queue_capacity, std::bit_ceil(o.max_connections + 2));
  return nc;
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
  auto nic = clan::Nic::open(nic_config(name, fabric_options()));
  if (!nic) {
    omniORB::logger l;
    l << scheme << ": cannot open the NIC of node '" << name.c_str()
      << "': " << clan::error_message(nic.error()).c_str() << "\n";
    return nullptr;
  }
  clan::OobConfig oc;
  oc.node = name;
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

void Fabric::release() {
  std::lock_guard lock(fabric_mu);
  the_fabric.reset();
}

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
