// Tests that set up connections over the OOB manager: a private runtime
// directory per test (so node names never collide) and an OOB configuration
// with short liveness timers (peer death shows within half a second).
#pragma once

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "clan_emul/oob_manager.hpp"

namespace clan::test {

struct RuntimeDir {
  std::string path;
  RuntimeDir() {
    char tmpl[] = "/tmp/clan-test-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~RuntimeDir() { std::filesystem::remove_all(path); }
  RuntimeDir(const RuntimeDir&) = delete;
  RuntimeDir& operator=(const RuntimeDir&) = delete;
};

inline OobConfig oob_config(const RuntimeDir& dir, const char* node) {
  OobConfig c;
  c.node = node;
  c.runtime_dir = dir.path;
  c.heartbeat_interval = std::chrono::milliseconds(50);
  c.peer_timeout = std::chrono::milliseconds(500);
  return c;
}

}  // namespace clan::test
