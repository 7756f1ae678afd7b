// A bounds-checked reader of CDR encapsulations (CORBA 3.0, 15.3.3), for data
// that comes from outside the process: IORs and their tagged components. The
// first octet gives the byte order; alignment counts from that octet. Every
// read checks what is left, so no input can make it read out of bounds; the
// first failed read records what was being read and why, and every later
// read fails too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace clanorb {

class CdrReader {
 public:
  // `data` must outlive the reader. An empty encapsulation fails at once.
  CdrReader(const uint8_t* data, size_t len);
  explicit CdrReader(const std::vector<uint8_t>& data) : CdrReader(data.data(), data.size()) {}

  bool ok() const { return error_.empty(); }
  // "truncated <what>: ..." or similar; empty while every read succeeded.
  const std::string& error() const { return error_; }
  size_t remaining() const { return len_ - pos_; }

  // Each returns false (and sets error()) if `what` cannot be read.
  bool read_octet(uint8_t& v, const char* what);
  bool read_ushort(uint16_t& v, const char* what);
  bool read_ulong(uint32_t& v, const char* what);
  // A string: ulong length counting the terminating NUL, then the octets.
  bool read_string(std::string& v, const char* what);
  // A sequence<octet>: ulong length, then the octets.
  bool read_octets(std::vector<uint8_t>& v, const char* what);
  // Marks the data bad for a check of the caller's (a count beyond what is
  // left, say); returns false. The first failure is the one kept.
  bool fail(const std::string& why);

 private:
  bool take(size_t n, size_t alignment, const char* what, const uint8_t*& p);

  const uint8_t* data_;
  size_t len_;
  size_t pos_ = 0;
  bool little_endian_ = false;
  std::string error_;
};

// Writes a CDR encapsulation in big-endian order (byte-order octet 0).
class CdrWriter {
 public:
  CdrWriter() { out_.push_back(0); }
  void write_octet(uint8_t v) { out_.push_back(v); }
  void write_ushort(uint16_t v);
  void write_ulong(uint32_t v);
  void write_string(const std::string& v);
  void write_octets(const std::vector<uint8_t>& v);  // a sequence<octet>
  const std::vector<uint8_t>& bytes() const { return out_; }

 private:
  std::vector<uint8_t> out_;
};

}  // namespace clanorb
