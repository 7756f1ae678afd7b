#include "clan_emul/oob_wire.hpp"

#include <cstring>

namespace clan::oob_wire {
namespace {

class Writer {
 public:
  explicit Writer(std::size_t reserve) { buf_.reserve(reserve); }
  void u8(uint8_t v) { buf_.push_back(std::byte{v}); }
  void u16(uint16_t v) { uint_le(v, 2); }
  void u32(uint32_t v) { uint_le(v, 4); }
  void u64(uint64_t v) { uint_le(v, 8); }
  void bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    buf_.insert(buf_.end(), b, b + n);
  }
  std::vector<std::byte> take() { return std::move(buf_); }

 private:
  void uint_le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) buf_.push_back(std::byte(static_cast<uint8_t>(v >> (8 * i))));
  }
  std::vector<std::byte> buf_;
};

// Bounds-checked reader: any short read sets failed() and yields zeros.
class Reader {
 public:
  explicit Reader(std::span<const std::byte> s) : s_(s) {}
  uint8_t u8() { return static_cast<uint8_t>(uint_le(1)); }
  uint16_t u16() { return static_cast<uint16_t>(uint_le(2)); }
  uint32_t u32() { return static_cast<uint32_t>(uint_le(4)); }
  uint64_t u64() { return uint_le(8); }
  std::span<const std::byte> bytes(std::size_t n) {
    if (failed_ || s_.size() - pos_ < n) {
      failed_ = true;
      return {};
    }
    auto out = s_.subspan(pos_, n);
    pos_ += n;
    return out;
  }
  bool failed() const { return failed_; }
  bool at_end() const { return pos_ == s_.size(); }

 private:
  uint64_t uint_le(std::size_t n) {
    auto b = bytes(n);
    uint64_t v = 0;
    for (std::size_t i = 0; i < b.size(); ++i) v |= static_cast<uint64_t>(b[i]) << (8 * i);
    return v;
  }
  std::span<const std::byte> s_;
  std::size_t pos_ = 0;
  bool failed_ = false;
};

bool read_blob(Reader& r, std::vector<std::byte>& out) {
  uint32_t len = r.u32();
  if (r.failed() || len > kMaxBlob) return false;
  auto b = r.bytes(len);
  if (r.failed()) return false;
  out.assign(b.begin(), b.end());
  return true;
}

// A length byte and a node name; false unless it is a valid one.
bool read_name(Reader& r, std::string& out) {
  uint8_t len = r.u8();
  auto b = r.bytes(len);
  if (r.failed()) return false;
  out.assign(reinterpret_cast<const char*>(b.data()), b.size());
  return valid_node_name(out);
}

}  // namespace

bool valid_node_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxNodeName) return false;
  if (name == "." || name == "..") return false;
  for (char c : name) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::vector<std::byte> encode(const Message& m) {
  Writer w(kMaxHeader + 24 + m.blob.size());
  w.u32(kMagic);
  w.u8(kVersion);
  w.u8(static_cast<uint8_t>(m.hdr.type));
  w.u8(static_cast<uint8_t>(m.hdr.node.size()));
  w.bytes(m.hdr.node.data(), m.hdr.node.size());
  w.u64(m.hdr.instance);
  w.u32(static_cast<uint32_t>(m.hdr.pid));
  w.bytes(m.hdr.boot_id.data(), m.hdr.boot_id.size());
  w.u64(m.hdr.pid_ns);
  w.bytes(m.hdr.token.data(), m.hdr.token.size());
  w.u16(m.hdr.reply_port);
  switch (m.hdr.type) {
    case MsgType::kConnectReq:
      w.u64(m.src_conn);
      w.u16(m.port);
      w.u8(static_cast<uint8_t>(m.dst_node.size()));
      w.bytes(m.dst_node.data(), m.dst_node.size());
      w.u32(static_cast<uint32_t>(m.blob.size()));
      w.bytes(m.blob.data(), m.blob.size());
      break;
    case MsgType::kAccept:
      w.u64(m.dst_conn);
      w.u64(m.src_conn);
      w.u32(static_cast<uint32_t>(m.blob.size()));
      w.bytes(m.blob.data(), m.blob.size());
      break;
    case MsgType::kReject:
      w.u64(m.dst_conn);
      w.u8(static_cast<uint8_t>(m.reason));
      break;
    case MsgType::kDisconnect:
      w.u64(m.dst_conn);
      w.u64(m.src_conn);
      break;
    case MsgType::kHeartbeat:
      break;
  }
  return w.take();
}

std::optional<Message> decode(std::span<const std::byte> frame) {
  if (frame.size() > kMaxFrame) return std::nullopt;
  Reader r(frame);
  Message m;
  if (r.u32() != kMagic || r.u8() != kVersion) return std::nullopt;
  uint8_t type = r.u8();
  if (type < 1 || type > kMaxMsgType) return std::nullopt;
  m.hdr.type = static_cast<MsgType>(type);
  if (!read_name(r, m.hdr.node)) return std::nullopt;
  m.hdr.instance = r.u64();
  m.hdr.pid = static_cast<int32_t>(r.u32());
  auto boot = r.bytes(m.hdr.boot_id.size());
  if (r.failed()) return std::nullopt;
  std::memcpy(m.hdr.boot_id.data(), boot.data(), boot.size());
  m.hdr.pid_ns = r.u64();
  auto token = r.bytes(m.hdr.token.size());
  if (r.failed()) return std::nullopt;
  std::memcpy(m.hdr.token.data(), token.data(), token.size());
  m.hdr.reply_port = r.u16();
  if (m.hdr.instance == 0 || m.hdr.pid <= 0) return std::nullopt;

  switch (m.hdr.type) {
    case MsgType::kConnectReq:
      m.src_conn = r.u64();
      m.port = r.u16();
      if (m.src_conn == 0 || !read_name(r, m.dst_node) || !read_blob(r, m.blob)) return std::nullopt;
      break;
    case MsgType::kAccept:
      m.dst_conn = r.u64();
      m.src_conn = r.u64();
      if (m.dst_conn == 0 || m.src_conn == 0 || !read_blob(r, m.blob)) return std::nullopt;
      break;
    case MsgType::kReject: {
      m.dst_conn = r.u64();
      uint8_t reason = r.u8();
      if (m.dst_conn == 0 || reason < 1 || reason > kMaxRejectReason) return std::nullopt;
      m.reason = static_cast<RejectReason>(reason);
      break;
    }
    case MsgType::kDisconnect:
      m.dst_conn = r.u64();
      m.src_conn = r.u64();
      if (m.dst_conn == 0 || m.src_conn == 0) return std::nullopt;
      break;
    case MsgType::kHeartbeat:
      break;
  }
  if (r.failed() || !r.at_end()) return std::nullopt;
  return m;
}

}  // namespace clan::oob_wire
