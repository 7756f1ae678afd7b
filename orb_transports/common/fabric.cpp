#include "orb_transports/common/fabric.hpp"

#include <unistd.h>

#include <fstream>

#include <omniORB4/CORBA.h>

#include "clan_emul/error_detail.hpp"

namespace clanorb {

FabricOptions& fabric_options() {
  static FabricOptions o;
  return o;
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
  clan::NicConfig nc;
  nc.name = name;
  nc.spin_budget = std::chrono::nanoseconds(fabric_options().spin_ns);
  auto nic = clan::Nic::open(nc);
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
