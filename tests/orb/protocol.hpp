// What the test process and orb_test_peer agree on: the servant's magic
// messages, the server's stdout lines, the client's exit codes, and the byte
// pattern ttcp buffers carry so that the servant can check their content.
#pragma once

#include <cstddef>
#include <cstdint>

namespace clan::orbtest {

// echoString(kStallMessage) blocks in the servant: the server prints
// "stalled" on stdout, then waits until a "release" line arrives on its stdin
// (or stdin closes), and echoes the message.
inline constexpr const char* kStallMessage = "@stall";

// Server stdout: "echo IOR:...", "ttcp IOR:...", "ready", then one "stalled"
// per call entering the stall. Server stdin: "release" lets one stalled call
// return; end of file releases all and shuts the server down (exit 0).
inline constexpr const char* kReleaseLine = "release";
// Server stdin: "exhaust-fds" makes the server open descriptors until the
// kernel refuses one (it keeps them all), then print "exhausted".
inline constexpr const char* kExhaustFdsLine = "exhaust-fds";
// Server stdin: "heap" prints the allocator's figures on one line starting
// "heap "; "trim" returns its free memory to the system, then prints "trimmed".
inline constexpr const char* kHeapLine = "heap";
inline constexpr const char* kTrimLine = "trim";
// Server stdin: "remaps" prints how often the server's NIC made a
// connection's endpoint resident again for want of frames, on one line
// starting "remaps " (peer_nic_stats.hpp).
inline constexpr const char* kRemapsLine = "remaps";

// Client stdout: with --pause-after N, "paused" once N calls are answered;
// the client then waits for a "go" line on its stdin (or its end) before
// its next call.
inline constexpr const char* kPausedLine = "paused";
inline constexpr const char* kGoLine = "go";

// Client (orb_test_peer client) exit codes.
enum ClientExit : int {
  kClientOk = 0,
  kClientWrongReply = 1,
  kClientSystemException = 2,
  kClientUsage = 3,
  kClientResolveFailed = 4,
  kClientNotTheExpectedException = 5,  // with --expect
};

// Byte i of a ttcp buffer of length `len`. Depends on the length so that a
// buffer truncated or spliced from another call does not pass.
inline std::uint8_t pattern_byte(std::size_t len, std::size_t i) {
  std::uint32_t x = static_cast<std::uint32_t>(i) * 2654435761u +
                    static_cast<std::uint32_t>(len) * 40503u + 0x9e37u;
  return static_cast<std::uint8_t>((x >> 24) ^ (x >> 8));
}

inline void fill_pattern(std::uint8_t* p, std::size_t len) {
  for (std::size_t i = 0; i < len; ++i) p[i] = pattern_byte(len, i);
}

inline bool check_pattern(const std::uint8_t* p, std::size_t len) {
  for (std::size_t i = 0; i < len; ++i)
    if (p[i] != pattern_byte(len, i)) return false;
  return true;
}

// receive_marshalled's elements: pair i is {i, ~i}.
inline std::int32_t pair_a(std::uint32_t i) { return static_cast<std::int32_t>(i); }
inline std::int32_t pair_b(std::uint32_t i) { return static_cast<std::int32_t>(~i); }

}  // namespace clan::orbtest
