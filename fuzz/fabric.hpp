// The fuzz process's out-of-band fabric and NICs for targets that need a
// connection: a private runtime directory, the hostile side's connection
// manager and NIC, and optionally a second pair for the side under test,
// started once and shared by every input. Destroyed in reverse order at
// exit, the directory last.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "clan_emul/nic.hpp"
#include "clan_emul/oob_listener.hpp"
#include "clan_emul/oob_manager.hpp"
#include "fuzz/check.hpp"

namespace fuzz {

struct Fabric {
  struct Dir {
    std::string path;
    Dir() {
      char tmpl[] = "/tmp/clanorb-fuzz-XXXXXX";
      FUZZ_CHECK(mkdtemp(tmpl) != nullptr);
      path = tmpl;
    }
    ~Dir() { std::filesystem::remove_all(path); }
  } dir;
  std::unique_ptr<clan::Nic> raw_nic, link_nic;
  std::unique_ptr<clan::OobManager> raw, link;
  std::unique_ptr<clan::OobListener> listener;

  // Without link_name, only the hostile side (the side under test brings its own).
  explicit Fabric(const char* raw_name, const char* link_name = nullptr) {
    clan::NicConfig nc;
    nc.spin_budget = std::chrono::nanoseconds(0);
    raw_nic = std::move(clan::Nic::open(nc).value());
    raw = std::move(clan::OobManager::start(config(raw_name)).value());
    if (!link_name) return;
    link_nic = std::move(clan::Nic::open(nc).value());
    link = std::move(clan::OobManager::start(config(link_name)).value());
  }
  clan::OobConfig config(const char* node) const {
    clan::OobConfig c;
    c.node = node;
    c.runtime_dir = dir.path;
    return c;
  }
};

}  // namespace fuzz
