// Out-of-band wire decoder (clan_emul/oob_wire.*): any bytes as one ZeroMQ
// frame. Contract: a frame decode() accepts re-encodes to exactly the same
// bytes, and every field it returns is within the bounds the format states
// (a valid node name, instance and pid set, connection ids non-zero where
// required, a blob of at most kMaxBlob).
#include <cstring>
#include <span>

#include "clan_emul/oob_wire.hpp"
#include "fuzz/check.hpp"

using namespace clan::oob_wire;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> frame(reinterpret_cast<const std::byte*>(data), size);
  const auto m = decode(frame);
  if (!m) return 0;
  FUZZ_CHECK(size <= kMaxFrame);
  FUZZ_CHECK(valid_node_name(m->hdr.node));
  FUZZ_CHECK(m->hdr.instance != 0 && m->hdr.pid > 0);
  FUZZ_CHECK(m->blob.size() <= kMaxBlob);
  const auto t = static_cast<uint8_t>(m->hdr.type);
  FUZZ_CHECK(t >= 1 && t <= kMaxMsgType);
  switch (m->hdr.type) {
    case MsgType::kConnectReq: FUZZ_CHECK(m->src_conn != 0); break;
    case MsgType::kAccept:
    case MsgType::kDisconnect: FUZZ_CHECK(m->dst_conn != 0 && m->src_conn != 0); break;
    case MsgType::kReject:
      FUZZ_CHECK(m->dst_conn != 0);
      FUZZ_CHECK(static_cast<uint8_t>(m->reason) >= 1 &&
                 static_cast<uint8_t>(m->reason) <= kMaxRejectReason);
      break;
    case MsgType::kHeartbeat: break;
  }
  const auto again = encode(*m);
  FUZZ_CHECK(again.size() == size);
  FUZZ_CHECK(std::memcmp(again.data(), data, size) == 0);
  return 0;
}
