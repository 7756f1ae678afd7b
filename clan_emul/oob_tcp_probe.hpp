// Whether anything listens at a peer's tcp address: one non-blocking
// connect. A refused connect (the peer's host answers with a reset) is
// evidence that the process which listened there is gone; a connect that
// completes, times out or finds no route is not evidence of anything. A
// stopped process (SIGSTOP) keeps its listening socket, and its kernel
// completes the connect. Not part of the public API.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "clan_emul/deadline.hpp"

namespace clan::oob_detail {

class TcpProbe {
 public:
  enum class Outcome { kPending, kRefused, kListening, kNoAnswer };

  // Starts a connect to `host` (numeric, IPv6 bracketed) and `port`; it
  // stays pending at most until `deadline`.
  TcpProbe(const std::string& host, uint16_t port, Clock::time_point deadline);
  ~TcpProbe();
  TcpProbe(const TcpProbe&) = delete;
  TcpProbe& operator=(const TcpProbe&) = delete;

  // The socket to poll for POLLOUT while pending; -1 once decided.
  int fd() const { return fd_; }
  Clock::time_point deadline() const { return deadline_; }
  // Decides once the socket is writable or the deadline has passed.
  Outcome check(Clock::time_point now);

 private:
  void finish(Outcome o);

  int fd_ = -1;
  Clock::time_point deadline_;
  Outcome outcome_ = Outcome::kPending;
};

}  // namespace clan::oob_detail
