// Wire format of the out-of-band connection-management messages.
//
// One ZeroMQ frame per message, sent by a node's DEALER to the peer node's
// ROUTER. Little-endian, no padding:
//
//   header  magic u32 'CLOB' | version u8 | type u8 | node_len u8 | node[node_len]
//           | instance u64 | pid i32 | boot_id[16] | pid_ns u64 | token[16]
//           | reply_port u16
//   CONNECT_REQ  src_conn u64 | port u16 | dst_len u8 | dst_node[dst_len]
//                | blob_len u32 | blob
//   ACCEPT       dst_conn u64 | src_conn u64 | blob_len u32 | blob
//   REJECT       dst_conn u64 | reason u8
//   DISCONNECT   dst_conn u64 | src_conn u64
//   HEARTBEAT    (nothing)
//
// Every message carries the sender's identity (node, instance, pid, boot id) so
// that any message is proof of life and a restarted node (same name, new
// instance) is told apart from the one our connections were made with. The
// token proves the sender: the node derives it from its secret and the
// receiver's name (SipHash), so only the two of them know it, and the receiver
// believes a frame about a node it knows only if it carries that node's token.
// reply_port is the tcp port the sender listens on (0: none): a frame that
// comes over tcp is answered at the address it came from and that port.
// CONNECT_REQ names the node it is meant for, so that a node reached at an
// address answers only to its own name (REJECT kWrongNode otherwise).
// decode() checks every field and the exact length; anything else is garbage.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace clan::oob_wire {

inline constexpr uint32_t kMagic = 0x424F4C43;  // "CLOB" read little-endian
inline constexpr uint8_t kVersion = 3;
inline constexpr std::size_t kMaxBlob = 64 * 1024;
inline constexpr std::size_t kMaxNodeName = 64;
// Largest valid frame: header with a 64-char name + ACCEPT with a full blob.
inline constexpr std::size_t kMaxHeader = 4 + 1 + 1 + 1 + kMaxNodeName + 8 + 4 + 16 + 8 + 16 + 2;
// Largest body: CONNECT_REQ with a 64-char destination and a full blob.
inline constexpr std::size_t kMaxFrame = kMaxHeader + 8 + 2 + 1 + kMaxNodeName + 4 + kMaxBlob;

enum class MsgType : uint8_t {
  kConnectReq = 1,
  kAccept = 2,
  kReject = 3,
  kDisconnect = 4,
  kHeartbeat = 5,
};
inline constexpr uint8_t kMaxMsgType = 5;

constexpr const char* to_string(MsgType t) {
  switch (t) {
    case MsgType::kConnectReq: return "CONNECT_REQ";
    case MsgType::kAccept: return "ACCEPT";
    case MsgType::kReject: return "REJECT";
    case MsgType::kDisconnect: return "DISCONNECT";
    case MsgType::kHeartbeat: return "HEARTBEAT";
  }
  return "?";
}

enum class RejectReason : uint8_t {
  kNoListener = 1,  // nobody listens on the port (or the listener went away)
  kRejected = 2,    // the listener's owner said no
  kBusy = 3,        // the listener's queue is full
  kWrongNode = 4,   // the CONNECT_REQ named another node than the one at the address
};
inline constexpr uint8_t kMaxRejectReason = 4;

using BootId = std::array<uint8_t, 16>;
using Token = std::array<uint8_t, 16>;

struct Header {
  MsgType type = MsgType::kHeartbeat;
  std::string node;        // sender's node name
  uint64_t instance = 0;   // sender manager's random instance id, never 0
  int32_t pid = 0;         // sender's pid, > 0
  BootId boot_id{};        // sender's /proc/sys/kernel/random/boot_id
  uint64_t pid_ns = 0;     // inode of the sender's pid namespace (0 = unknown)
  Token token{};           // the sender's token for the receiver
  uint16_t reply_port = 0; // the tcp port the sender listens on; 0: none
};

struct Message {
  Header hdr;
  uint64_t dst_conn = 0;             // ACCEPT, REJECT, DISCONNECT: receiver's connection id
  uint64_t src_conn = 0;             // CONNECT_REQ, ACCEPT, DISCONNECT: sender's connection id
  uint16_t port = 0;                 // CONNECT_REQ
  std::string dst_node;              // CONNECT_REQ: the node it is meant for
  RejectReason reason = RejectReason::kNoListener;  // REJECT
  std::vector<std::byte> blob;       // CONNECT_REQ, ACCEPT
};

// [A-Za-z0-9._-]{1,64}, and not "." or ".." (the name becomes a file name).
bool valid_node_name(std::string_view name);

std::vector<std::byte> encode(const Message& m);
// nullopt: malformed (bad magic/version/type, bad field, wrong length).
std::optional<Message> decode(std::span<const std::byte> frame);

}  // namespace clan::oob_wire
