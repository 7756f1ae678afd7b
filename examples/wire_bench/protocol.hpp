// bench_wire's control protocol: the client sends a Command, the server
// carries it out on the wire and answers with a Reply. Both processes are
// the same program, so the structs are the same on both sides.
#pragma once

#include <cstdint>

#include "wire_bench/wire.hpp"

namespace wire_bench {

enum class Op : uint32_t {
  kQuit = 0,
  kSetup = 1,  // make wire `wire`'s link (its own rendezvous follows)
  kPong = 2,   // echo `count` messages of `size` bytes, waiting as `wait` says
  kSink = 3,   // receive `count` messages of `size` bytes, then send an 8-byte acknowledgement
};

struct Command {
  Op op = Op::kQuit;
  uint32_t wire = 0;  // index in wires()
  Wait wait = Wait::kBlocking;
  uint32_t size = 0;
  uint64_t count = 0;
};

struct Reply {
  int32_t status = 0;  // 0, or why the server failed (Failure)
  uint32_t pad = 0;
  uint64_t value = 0;  // kSink: bytes received
};

enum Failure : int32_t {
  kBadCommand = 1,
  kNoLink = 2,
  kLinkFailed = 3,
  kBadPayload = 4,
  kSetupFailed = 5,
};

// The largest message either side sends.
constexpr uint32_t kMaxMessage = 1u << 20;

}  // namespace wire_bench
