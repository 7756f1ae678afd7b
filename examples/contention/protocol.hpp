// bench_contention's processes and what they say to each other: one server
// process, N client processes, and the measuring process between them
// (paper 004 sect. 6.4). Every message is a plain struct on a control
// channel (bench/channel.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "clan_emul/cookie.hpp"
#include "clan_emul/endpoint.hpp"
#include "clan_emul/oob_manager.hpp"

namespace contention {

// The server's organisation (paper 004 sect. 6.4).
enum class Config : uint32_t {
  kOneVn,  // one server endpoint shared by every connection, one thread
  kSt,     // an endpoint per connection, one thread over an event queue
  kMt,     // an endpoint per connection, a thread per connection
  kFixed,  // a thread per connection over bare queues, no endpoint at all
};
const char* to_string(Config c);

// One measured point: what the server and the clients are built with.
struct PointSpec {
  Config config = Config::kMt;
  uint32_t frames = 96;
  clan::Replacement replacement = clan::Replacement::kLru;
  uint32_t clients = 1;
  uint32_t size = 16;  // request bytes; the reply is kReplyBytes
  int64_t spin_ns = -1;
};

// The reply to every request: small, so that bulk requests measure the
// request direction (paper 004 Fig. 7).
constexpr uint32_t kReplyBytes = 16;
constexpr uint16_t kPort = 29;
const char* const kServerNode = "contention-srv";
std::string client_node(uint32_t client);
// A connection manager's configuration for `node` (the runtime directory
// from CLAN_RUNTIME_DIR, set by the measuring process).
clan::OobConfig oob_config(const std::string& node);

// The measured interval, CLOCK_MONOTONIC nanoseconds: clients count the
// replies that arrive in [begin, end) and stop sending at end.
struct Window {
  uint64_t begin_ns;
  uint64_t end_ns;
};

// A client's figures over the window.
struct ClientReport {
  int32_t status;  // 0, or the clan::Errc that ended the stream
  uint64_t replies;
  uint64_t max_round_trip_ns;  // the longest request-reply in the window
};

// The server's resident-set counters over the window.
struct ServerReport {
  int32_t status;
  uint64_t remaps;
  uint64_t evictions;
  uint64_t requests;  // served over the whole run
};

// The fixed-resource build's set-up: each side's receive ring and send
// queue cookies, relayed by the measuring process.
struct QueueCookies {
  clan::RdmaCookie rx;
  clan::RdmaCookie tx;
};

// The rings every connection uses: room for a bulk request and more.
constexpr size_t kRingBytes = 64 * 1024;
constexpr size_t kMaxMessage = 8192;

}  // namespace contention
