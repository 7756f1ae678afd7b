#include "orb_transports/otp/giop_framer.hpp"

#include <cstring>

namespace clanorb {

namespace {
uint32_t load_u32(const std::byte* p, bool little) {
  uint8_t b[4];
  std::memcpy(b, p, 4);
  return little ? uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24
                : uint32_t(b[3]) | uint32_t(b[2]) << 8 | uint32_t(b[1]) << 16 | uint32_t(b[0]) << 24;
}
}  // namespace

bool GiopFramer::parse_header(const std::byte* h) {
  if (std::memcmp(h, "GIOP", 4) != 0) return false;
  major_ = static_cast<uint8_t>(h[4]);
  minor_ = static_cast<uint8_t>(h[5]);
  if (major_ != 1 || minor_ > 2) return false;
  const uint8_t flags = static_cast<uint8_t>(h[6]);
  const auto type = static_cast<MsgType>(h[7]);
  if (static_cast<uint8_t>(type) > static_cast<uint8_t>(MsgType::kFragment)) return false;
  little_endian_ = flags & 1;
  more_fragments_ = minor_ >= 1 && (flags & 2);
  body_left_ = body_size_ = load_u32(h + 8, little_endian_);
  deciding_ = false;
  prefix_have_ = 0;
  close_ = false;
  if (type == MsgType::kFragment) {
    if (!in_call_) return false;  // a Fragment continues a call
    return true;
  }
  if (in_call_) return false;  // a new message before the last one's fragments ended
  in_call_ = true;
  switch (type) {
    case MsgType::kRequest:
      expects_reply_ = true;  // refined when the request header is read
      deciding_ = true;
      break;
    case MsgType::kLocateRequest: expects_reply_ = true; break;
    case MsgType::kCloseConnection:
      close_ = true;
      expects_reply_ = false;
      break;
    case MsgType::kReply:
    case MsgType::kCancelRequest:
    case MsgType::kLocateReply:
    case MsgType::kMessageError:
    case MsgType::kFragment: expects_reply_ = false; break;
  }
  return true;
}

// Reads response_expected / response_flags from the start of a Request body.
// GIOP 1.2: request_id, then response_flags (bit 0: an answer is wanted).
// GIOP 1.0/1.1: service contexts first, then request_id, then the boolean.
// Offsets are aligned relative to the message start (the body begins at 12).
bool GiopFramer::parse_request(const std::byte* body, size_t avail) {
  if (minor_ >= 2) {
    if (avail < 5) return false;
    expects_reply_ = (static_cast<uint8_t>(body[4]) & 1) != 0;
    return true;
  }
  size_t off = 0;  // relative to the body; message offset = off + 12 (12 is 4-aligned)
  auto align4 = [&] { off = (off + 3) & ~size_t{3}; };
  if (avail < 4) return false;
  const uint32_t contexts = load_u32(body, little_endian_);
  off = 4;
  for (uint32_t i = 0; i < contexts; ++i) {
    align4();
    if (off + 8 > avail) return false;
    const uint32_t data_len = load_u32(body + off + 4, little_endian_);
    off += 8;
    if (data_len > avail - off) return false;
    off += data_len;
  }
  align4();
  if (off + 5 > avail) return false;  // request_id, response_expected
  expects_reply_ = static_cast<uint8_t>(body[off + 4]) != 0;
  return true;
}

GiopFramer::Piece GiopFramer::next(const std::byte* data, size_t len) {
  Piece p;
  size_t used = 0;
  while (used < len) {
    if (header_have_ < 12) {
      const size_t take = 12 - header_have_ < len - used ? 12 - header_have_ : len - used;
      std::memcpy(header_ + header_have_, data + used, take);
      header_have_ += take;
      used += take;
      if (header_have_ < 12) break;
      if (!parse_header(header_)) {
        p.valid = false;
        return p;
      }
    }
    if (deciding_) {
      // Gather the request header (omniORB marshals it into one chunk, but a
      // split one must not be misread) until the answer flag can be read. A
      // header longer than the gathering buffer is taken to want an answer,
      // the safe side for a request.
      const size_t avail = len - used < body_left_ ? len - used : static_cast<size_t>(body_left_);
      const size_t room = sizeof prefix_ - prefix_have_;
      const size_t copy = avail < room ? avail : room;
      std::memcpy(prefix_ + prefix_have_, data + used, copy);
      prefix_have_ += copy;
      if (parse_request(prefix_, prefix_have_) || prefix_have_ == sizeof prefix_ ||
          prefix_have_ == body_size_) {
        deciding_ = false;
      }
    }
    const uint64_t take = body_left_ < len - used ? body_left_ : len - used;
    used += static_cast<size_t>(take);
    body_left_ -= take;
    if (body_left_ == 0) {
      header_have_ = 0;  // message done
      if (!more_fragments_) {
        p.ends_call = true;
        in_call_ = false;
        break;
      }
    }
  }
  p.len = used;
  p.expects_reply = expects_reply_;
  p.known = !deciding_;
  p.close = close_;
  return p;
}

}  // namespace clanorb
