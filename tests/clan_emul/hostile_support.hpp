// What the hostile-peer tests of the remote wire share: a well-behaved
// writer linked to the owner whose every write must keep landing, and
// waits that poll the owner's wire statistics with a deadline.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "clan_emul/tripwire.hpp"
#include "clan_emul/wire/write_notice.hpp"
#include "tests/clan_emul/wire_pair.hpp"

namespace clan::test {

// The owner's region with a tripwire on word 0, and the good writer's
// aperture onto it over the wire.
struct GoodWriter {
  WirePair pair;
  Tripwire tripwire;
  Aperture aperture;
  uint32_t writes = 0;

  explicit GoodWriter(size_t bytes = 4096) : pair(bytes) {
    tripwire = std::move(pair.owner->arm_tripwire(pair.region, 0).value());
    if (pair.link() == Errc::kOk) aperture = std::move(pair.writer->import(pair.region.cookie()).value());
  }
  // Writes the next value to word 0; true once it landed and fired the tripwire.
  bool still_works() {
    const uint64_t value = 0x600d'0000 + ++writes;
    if (aperture.write_word(0, value) != Errc::kOk) return false;
    const uint32_t want = writes;
    const Errc e = tripwire.wait([&] { return tripwire.fired() >= want; },
                                 Deadline::after(std::chrono::seconds(10)));
    return e == Errc::kOk && pair.word(0) == value;
  }
  wire::WireStats stats() const { return pair.owner->wire()->stats(); }
  uint64_t key() const {
    const RdmaCookie c = pair.region.cookie();
    return wire::registration_key(c.secret[0], c.secret[1], c.region, c.generation);
  }
  uint32_t region() const { return pair.region.cookie().region; }
};

// Polls until `done` holds (false at the deadline); no sleeping.
inline bool eventually(const std::function<bool()>& done,
                       Deadline deadline = Deadline::after(std::chrono::seconds(10))) {
  while (!done()) {
    if (deadline.expired()) return false;
    std::this_thread::yield();
  }
  return true;
}

inline bool all_zero(const std::byte* p, size_t n, size_t skip_from = 0, size_t skip_to = 0) {
  for (size_t i = 0; i < n; ++i) {
    if ((i < skip_from || i >= skip_to) && p[i] != std::byte{0}) return false;
  }
  return true;
}

// Bytes as hex text and back, to hand a cookie over a ForkedPeer's line.
inline std::string hex_of(const void* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    const auto b = static_cast<const unsigned char*>(p)[i];
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

inline bool bytes_of(const std::string& hex, void* out, size_t n) {
  if (hex.size() != 2 * n) return false;
  for (size_t i = 0; i < n; ++i) {
    const unsigned long b = std::stoul(hex.substr(2 * i, 2), nullptr, 16);
    static_cast<unsigned char*>(out)[i] = static_cast<unsigned char>(b);
  }
  return true;
}

// The peak resident memory of this process (VmHWM), in KiB; 0 if unknown.
inline long resident_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

// A hostile peer in a child process, forked at construction (before the
// test opens any NIC): it waits for the address to reach, runs `body`, and
// reports its one-line result; killed and reaped at the end.
class ForkedPeer {
 public:
  using Body = std::function<std::string(const std::string& address)>;
  explicit ForkedPeer(const Body& body) {
    if (::pipe2(down_, O_CLOEXEC) != 0 || ::pipe2(up_, O_CLOEXEC) != 0) return;
    pid_ = ::fork();
    const bool child = pid_ == 0;
    ::close(child ? down_[1] : down_[0]);
    ::close(child ? up_[0] : up_[1]);
    (child ? down_[1] : down_[0]) = -1;
    (child ? up_[0] : up_[1]) = -1;
    if (!child) return;
    const auto address = read_line(down_[0], Deadline::after(std::chrono::seconds(120)));
    std::string result = address ? body(*address) : std::string("no address");
    result += '\n';
    (void)!::write(up_[1], result.data(), result.size());
    (void)read_line(down_[0], Deadline::never());  // until the parent is done
    ::_exit(0);
  }
  ~ForkedPeer() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    for (int fd : {down_[1], up_[0]}) ::close(fd);
  }
  ForkedPeer(const ForkedPeer&) = delete;
  ForkedPeer& operator=(const ForkedPeer&) = delete;

  bool start(const std::string& address) {
    const std::string line = address + '\n';
    return pid_ > 0 && ::write(down_[1], line.data(), line.size()) == static_cast<ssize_t>(line.size());
  }
  std::optional<std::string> result(Deadline deadline) { return read_line(up_[0], deadline); }
  pid_t pid() const { return pid_; }

 private:
  static std::optional<std::string> read_line(int fd, Deadline deadline) {
    std::string out;
    for (;;) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, deadline.remaining_ms()) <= 0) return std::nullopt;
      char c;
      if (::read(fd, &c, 1) != 1) return std::nullopt;
      if (c == '\n') return out;
      out.push_back(c);
    }
  }
  int down_[2] = {-1, -1}, up_[2] = {-1, -1};
  pid_t pid_ = -1;
};

}  // namespace clan::test
