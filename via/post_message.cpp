// A receive descriptor as the cookie queue (and the handshake) carries it:
// a header, then (cookie, offset, length) per segment. What a peer wrote is
// read field by field, once, and checked before use.
#include <cstring>

#include "via/post_message.hpp"
#include "via/vi.hpp"

namespace via {

size_t encode_post(const PostedRecv& p, std::byte* out) {
  wire::PostHeader h{wire::kPostMagic, static_cast<uint32_t>(p.segs.size()), p.capacity,
                     p.split ? wire::kSplit : 0u, p.seq};
  std::memcpy(out, &h, sizeof h);
  size_t len = sizeof h;
  for (const auto& s : p.segs) {
    std::memcpy(out + len, &s, sizeof s);
    len += sizeof s;
  }
  return len;
}

bool parse_post(const std::byte* p, size_t len, uint64_t expect_seq, size_t& used,
                RemoteDesc& out) {
  wire::PostHeader h;
  if (len < sizeof h) return false;
  std::memcpy(&h, p, sizeof h);
  if (h.magic != wire::kPostMagic || h.segments > kMaxSegments || h.seq != expect_seq ||
      (h.flags & ~wire::kSplit) != 0) {
    return false;
  }
  used = sizeof h + h.segments * sizeof(wire::PostSegment);
  if (len < used) return false;
  out.seq = h.seq;
  out.capacity = h.capacity;
  out.split = (h.flags & wire::kSplit) != 0;
  out.segs.clear();
  uint64_t sum = 0;
  for (uint32_t i = 0; i < h.segments; ++i) {
    wire::PostSegment s;
    std::memcpy(&s, p + sizeof h + i * sizeof s, sizeof s);
    if (s.length > s.cookie.length || s.offset > s.cookie.length - s.length) return false;
    sum += s.length;
    out.segs.push_back(s);
  }
  return sum == h.capacity;
}

}  // namespace via
