// Roles, engine states and the external events delivered to the strand
// (paper 002, Table 1 "External" scope). See DESIGN.md for the machines.
#pragma once

#include <cstdint>

namespace otp {

enum class Role : uint8_t { kClient, kServer };

constexpr const char* to_string(Role r) {
  switch (r) {
    case Role::kClient: return "client";
    case Role::kServer: return "server";
  }
  return "?";
}

enum class State : uint8_t {
  kIdle,               // both: no call in progress (server: may hold an unacked reply)
  kRequestInProgress,  // client: PARTIAL of an exactly-once request sent, more to come
  kOneWayInProgress,   // client: PARTIAL of a one-way sent, more to come
  kWaitingForReply,    // client: request complete, reply not (completely) received
  kReceivingRequest,   // server: exactly-once request started, not complete
  kReceivingOneWay,    // server: one-way started (buffers passed up), not complete
  kIgnoringOneWay,     // server: one-way whose start was lost or that was aborted: drop the rest
  kReplying,           // server: request complete and delivered, strand producing the reply
  kZombie,             // both: hard error; no further operations
};

constexpr const char* to_string(State s) {
  switch (s) {
    case State::kIdle: return "Idle";
    case State::kRequestInProgress: return "RequestInProgress";
    case State::kOneWayInProgress: return "OneWayInProgress";
    case State::kWaitingForReply: return "WaitingForReply";
    case State::kReceivingRequest: return "ReceivingRequest";
    case State::kReceivingOneWay: return "ReceivingOneWay";
    case State::kIgnoringOneWay: return "IgnoringOneWay";
    case State::kReplying: return "Replying";
    case State::kZombie: return "Zombie";
  }
  return "?";
}

// External events to the strand.
enum class Delivery : uint8_t {
  kData,   // buffer of a request (server) or reply (client)
  kEof,    // connection closed locally (close())
  kBad,    // hard communication problem: the engine is now a zombie
  kAbort,  // server: abort stub processing of the one-way being received
};

constexpr const char* to_string(Delivery d) {
  switch (d) {
    case Delivery::kData: return "DATA";
    case Delivery::kEof: return "EOF";
    case Delivery::kBad: return "BAD";
    case Delivery::kAbort: return "ABORT";
  }
  return "?";
}

}  // namespace otp
