// The measuring side's end of the control protocol: it sends the peer a
// command and awaits its reply, both plain structs of the benchmark's own.
// A reply whose `status` is not 0 is the peer's failure. Every step is
// bounded; a missing or failed reply ends the benchmark (die).
#pragma once

#include <chrono>
#include <string>
#include <utility>

#include "bench/channel.hpp"
#include "bench/session.hpp"
#include "bench/start_signal.hpp"

namespace bench {

template <class Command, class Reply>
class Control {
 public:
  // With a StartSignal, command() waits until the peer has begun each
  // command; without one it only sends.
  explicit Control(Channel ch, const StartSignal* started = nullptr) : ch_(std::move(ch)), started_(started) {}

  void command(const Command& c, const std::string& what) {
    send(c, what);
    if (started_) started_->wait_for(commands_, what);
  }
  // Sends without waiting for the peer to begin (the last command, quit).
  void send(const Command& c, const std::string& what) {
    if (!ch_.put(c)) die("cannot send command for " + what);
    ++commands_;
  }
  Reply await(const std::string& what, std::chrono::seconds limit = std::chrono::seconds(120)) {
    Reply r{};
    if (!ch_.get(r, limit)) die("no reply from the peer after " + what);
    if (r.status != 0) die("peer failed in " + what + ": status " + std::to_string(r.status));
    return r;
  }
  // Set-up messages (cookies, "ready") in either direction.
  template <class T>
  T receive(const std::string& what, std::chrono::seconds limit = std::chrono::seconds(30)) {
    T v{};
    if (!ch_.get(v, limit)) die("no " + what + " from the peer");
    return v;
  }
  template <class T>
  void put(const T& v, const std::string& what) {
    if (!ch_.put(v)) die("cannot send " + what);
  }
  uint64_t commands() const { return commands_; }

 private:
  Channel ch_;
  const StartSignal* started_;
  uint64_t commands_ = 0;
};

}  // namespace bench
