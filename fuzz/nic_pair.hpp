// Two emulated NICs in the fuzz process, opened once and shared by every
// input: opening one creates its control segment, which costs far more than
// the rings a target makes per input.
#pragma once

#include <memory>

#include "clan_emul/nic.hpp"

namespace fuzz {

struct NicPair {
  std::unique_ptr<clan::Nic> a, b;
};

inline NicPair& nics() {
  static NicPair p = [] {
    clan::NicConfig c;
    c.spin_budget = std::chrono::nanoseconds(0);  // nothing here waits for another thread
    return NicPair{std::move(clan::Nic::open(c).value()), std::move(clan::Nic::open(c).value())};
  }();
  return p;
}

}  // namespace fuzz
