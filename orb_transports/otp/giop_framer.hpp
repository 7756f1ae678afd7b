// Follows an outgoing GIOP byte stream and tells the omniTransport layer what
// it needs (paper 002 sect. 2.1): where each call ends (a Request or Reply with
// all its Fragments: the send that carries its last byte is "complete") and
// whether a client message expects an answer (exactly-once) or not (one-way,
// at-most-once). GIOP 1.0, 1.1 and 1.2 are understood; a stream that is not
// GIOP is reported as invalid rather than guessed at.
#pragma once

#include <cstddef>
#include <cstdint>

namespace clanorb {

class GiopFramer {
 public:
  enum class MsgType : uint8_t {
    kRequest = 0, kReply = 1, kCancelRequest = 2, kLocateRequest = 3, kLocateReply = 4,
    kCloseConnection = 5, kMessageError = 6, kFragment = 7,
  };

  struct Piece {
    size_t len = 0;              // bytes of `data` that belong to the current call
    bool ends_call = false;      // the call's last byte is in this piece
    bool expects_reply = false;  // the call is answered (meaningful when `known`)
    bool known = true;           // false: the request header is not complete yet
    bool close = false;          // a CloseConnection message
    bool valid = true;           // false: not GIOP (the connection should be dropped)
  };

  // Splits the next `len` bytes to send. `len` may cover part of a message or
  // several; the piece stops at the end of the current call. A request header
  // split over pieces is gathered until its answer flag can be read.
  Piece next(const std::byte* data, size_t len);

  // The next byte is the first of a GIOP message header (or of a Fragment's).
  bool at_header() const { return header_have_ == 0; }

 private:
  bool parse_header(const std::byte* h);
  // Reads the answer flag from the request header; false if more bytes are needed.
  bool parse_request(const std::byte* body, size_t avail);

  std::byte header_[12];
  size_t header_have_ = 0;  // bytes of the current message header seen
  uint64_t body_size_ = 0;  // the current message's body size
  uint64_t body_left_ = 0;  // bytes of it still to come
  bool little_endian_ = false;
  uint8_t major_ = 0, minor_ = 0;
  bool more_fragments_ = false;  // the current message says a Fragment follows
  bool in_call_ = false;         // between a call's first header and its last byte
  bool expects_reply_ = false;
  bool close_ = false;
  bool deciding_ = false;        // a Request whose header is still being read
  std::byte prefix_[512];        // its first body bytes, gathered across pieces
  size_t prefix_have_ = 0;
};

}  // namespace clanorb
