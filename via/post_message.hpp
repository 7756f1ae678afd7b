// A receive descriptor as the cookie queue (and the handshake) carries it
// (post_message.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace via {

struct PostedRecv;
struct RemoteDesc;

// A receive descriptor as the cookie queue (and the handshake) carries it.
size_t encode_post(const PostedRecv& p, std::byte* out);  // out: kCookieMessage bytes
// Parses and checks one from peer-written bytes; `used` is its size.
bool parse_post(const std::byte* p, size_t len, uint64_t expect_seq, size_t& used, RemoteDesc& out);

}  // namespace via
