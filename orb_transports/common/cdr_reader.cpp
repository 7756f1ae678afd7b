#include "orb_transports/common/cdr_reader.hpp"

namespace clanorb {

CdrReader::CdrReader(const uint8_t* data, size_t len) : data_(data), len_(len) {
  uint8_t order = 0;
  if (!read_octet(order, "byte-order octet")) return;
  if (order > 1) {
    fail("the byte-order octet is " + std::to_string(order) + ", not 0 or 1");
    return;
  }
  little_endian_ = order == 1;
}

bool CdrReader::fail(const std::string& why) {
  if (error_.empty()) error_ = why;
  pos_ = len_;
  return false;
}

bool CdrReader::take(size_t n, size_t alignment, const char* what, const uint8_t*& p) {
  if (!ok()) return false;
  const size_t padding = (alignment - pos_ % alignment) % alignment;
  if (padding > remaining() || n > remaining() - padding) {
    return fail(std::string("truncated ") + what + ": needs " + std::to_string(padding + n) +
                " bytes at offset " + std::to_string(pos_) + ", " + std::to_string(remaining()) +
                " left");
  }
  pos_ += padding;
  p = data_ + pos_;
  pos_ += n;
  return true;
}

bool CdrReader::read_octet(uint8_t& v, const char* what) {
  const uint8_t* p = nullptr;
  if (!take(1, 1, what, p)) return false;
  v = p[0];
  return true;
}

bool CdrReader::read_ushort(uint16_t& v, const char* what) {
  const uint8_t* p = nullptr;
  if (!take(2, 2, what, p)) return false;
  v = little_endian_ ? static_cast<uint16_t>(p[0] | p[1] << 8)
                     : static_cast<uint16_t>(p[0] << 8 | p[1]);
  return true;
}

bool CdrReader::read_ulong(uint32_t& v, const char* what) {
  const uint8_t* p = nullptr;
  if (!take(4, 4, what, p)) return false;
  v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{p[little_endian_ ? i : 3 - i]} << (8 * i);
  return true;
}

bool CdrReader::read_string(std::string& v, const char* what) {
  uint32_t n = 0;
  if (!read_ulong(n, what)) return false;
  if (n == 0) return fail(std::string(what) + " has length 0 (a CDR string counts its NUL)");
  const uint8_t* p = nullptr;
  if (!take(n, 1, what, p)) return false;
  if (p[n - 1] != 0) return fail(std::string(what) + " is not NUL-terminated");
  v.assign(reinterpret_cast<const char*>(p), n - 1);
  if (v.find('\0') != std::string::npos) return fail(std::string(what) + " holds a NUL");
  return true;
}

bool CdrReader::read_octets(std::vector<uint8_t>& v, const char* what) {
  uint32_t n = 0;
  if (!read_ulong(n, what)) return false;
  const uint8_t* p = nullptr;
  if (!take(n, 1, what, p)) return false;
  v.assign(p, p + n);
  return true;
}

void CdrWriter::write_ushort(uint16_t v) {
  if (out_.size() % 2 != 0) out_.push_back(0);
  out_.push_back(static_cast<uint8_t>(v >> 8));
  out_.push_back(static_cast<uint8_t>(v));
}

void CdrWriter::write_ulong(uint32_t v) {
  while (out_.size() % 4 != 0) out_.push_back(0);
  for (int shift = 24; shift >= 0; shift -= 8) out_.push_back(static_cast<uint8_t>(v >> shift));
}

void CdrWriter::write_string(const std::string& v) {
  write_ulong(static_cast<uint32_t>(v.size() + 1));
  out_.insert(out_.end(), v.begin(), v.end());
  out_.push_back(0);
}

void CdrWriter::write_octets(const std::vector<uint8_t>& v) {
  write_ulong(static_cast<uint32_t>(v.size()));
  out_.insert(out_.end(), v.begin(), v.end());
}

}  // namespace clanorb
