// How a thread waits for a state change of the fabric (paper 004 sect. 3.3:
// event-driven waiting and polling are both first-class, chosen by the
// application per endpoint):
//   poll      spins until the state is ready or the deadline passes; never
//             sleeps, never makes a system call;
//   block     announces itself as a sleeper at once and sleeps on the futex
//             word; no spinning;
//   adaptive  spins while the thread that will answer is running on another
//             CPU, for at most the spin budget, then sleeps (spin_wait.hpp).
// A NIC's waits follow NicConfig::wait_mode; CLAN_WAIT_MODE overrides it for
// every NIC of the process.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace clan {

enum class WaitMode : uint8_t { kAdaptive, kPoll, kBlock };

// The words CLAN_WAIT_MODE, -ORBclanWaitMode and their error messages use.
inline constexpr const char* kWaitModeWords = "poll, block or adaptive";

constexpr const char* wait_mode_name(WaitMode m) {
  switch (m) {
    case WaitMode::kPoll: return "poll";
    case WaitMode::kBlock: return "block";
    case WaitMode::kAdaptive: break;
  }
  return "adaptive";
}

// The mode a word names (exactly, lower case), or nullopt.
constexpr std::optional<WaitMode> parse_wait_mode(std::string_view word) {
  for (WaitMode m : {WaitMode::kPoll, WaitMode::kBlock, WaitMode::kAdaptive}) {
    if (word == wait_mode_name(m)) return m;
  }
  return std::nullopt;
}

}  // namespace clan
