// Two engines joined by two SimLinks in virtual time: the test driver the
// transport will be in production (orb_transports/otp), minus the threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "omnitransport/engine.hpp"
#include "sim_link.hpp"

namespace otp::test {

struct Pair {
  Engine client;
  Engine server;
  SimLink c2s;
  SimLink s2c;
  uint64_t now = 0;
  std::vector<Engine::Received> client_rx;  // everything delivered to the client strand
  std::vector<Engine::Received> server_rx;  // everything delivered to the server strand

  explicit Pair(EngineConfig cfg = {}, SimLinkConfig c2s_cfg = {}, SimLinkConfig s2c_cfg = {})
      : client(Role::kClient, cfg), server(Role::kServer, cfg), c2s(c2s_cfg), s2c(s2c_cfg) {}

  void flush() {
    Engine::Packet p;
    while (client.next_packet(p)) c2s.send(std::move(p.bytes), now);
    while (server.next_packet(p)) s2c.send(std::move(p.bytes), now);
    Engine::Received r;
    while (client.next_received(r)) client_rx.push_back(std::move(r));
    while (server.next_received(r)) server_rx.push_back(std::move(r));
  }

  std::optional<uint64_t> next_event() const {
    std::optional<uint64_t> t;
    for (auto c : {c2s.next_arrival(), s2c.next_arrival(), client.next_timer(), server.next_timer()}) {
      if (c && (!t || *c < *t)) t = c;
    }
    return t;
  }

  // Advances virtual time to the next event and handles everything due.
  // Returns false when nothing at all is pending (quiescent).
  bool step() {
    flush();
    const auto t = next_event();
    if (!t) return false;
    now = std::max(now, *t);
    std::vector<std::byte> d;
    while (c2s.receive(now, d)) {
      server.on_packet(d.data(), d.size(), now);
      flush();
    }
    while (s2c.receive(now, d)) {
      client.on_packet(d.data(), d.size(), now);
      flush();
    }
    if (auto ct = client.next_timer(); ct && *ct <= now) client.on_timer(now);
    if (auto st = server.next_timer(); st && *st <= now) server.on_timer(now);
    flush();
    return true;
  }

  // Steps until pred() holds, nothing is pending, or virtual time passes limit_ns.
  template <class Pred>
  bool run_until(Pred pred, uint64_t limit_ns = 60'000'000'000ull) {
    while (!pred()) {
      if (now > limit_ns || !step()) return pred();
    }
    return true;
  }

  // Steps until nothing is pending. Returns false if virtual time ran out.
  bool quiesce(uint64_t limit_ns = 60'000'000'000ull) {
    while (step()) {
      if (now > limit_ns) return false;
    }
    return true;
  }
};

inline std::vector<std::byte> bytes_of(size_t n, uint8_t seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::byte{static_cast<uint8_t>(seed + i * 7)};
  return v;
}

// Concatenation of the kData payloads in rx[from, to).
inline std::vector<std::byte> joined(const std::vector<Engine::Received>& rx, size_t from = 0,
                                     size_t to = SIZE_MAX) {
  std::vector<std::byte> out;
  for (size_t i = from; i < std::min(to, rx.size()); ++i) {
    if (rx[i].what == Delivery::kData) out.insert(out.end(), rx[i].data.begin(), rx[i].data.end());
  }
  return out;
}

inline size_t count(const std::vector<Engine::Received>& rx, Delivery what) {
  return static_cast<size_t>(std::count_if(rx.begin(), rx.end(), [what](const auto& r) { return r.what == what; }));
}

inline size_t count_complete(const std::vector<Engine::Received>& rx) {
  return static_cast<size_t>(
      std::count_if(rx.begin(), rx.end(), [](const auto& r) { return r.what == Delivery::kData && r.complete; }));
}

}  // namespace otp::test
