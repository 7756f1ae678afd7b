// Hand-built packets for feeding one handler (eRPC-style protocol tests).
#pragma once

#include <vector>

#include "omnitransport/engine.hpp"

namespace otp::test {

inline std::vector<std::byte> pkt(PacketType t, uint8_t call, uint8_t seq, bool eo = true, size_t payload = 0,
                                  bool frag = false) {
  std::vector<std::byte> b(kHeaderSize + payload, std::byte{0x5A});
  Header h;
  h.type = t;
  h.exactly_once = eo;
  h.size = static_cast<uint16_t>(b.size());
  h.call_seq = call;
  h.pkt_seq = seq;
  h.fragmented = frag;
  encode(h, b.data());
  return b;
}

inline void feed(Engine& e, const std::vector<std::byte>& b, uint64_t now = 0) { e.on_packet(b.data(), b.size(), now); }

// Headers of everything the engine queued for transmission.
inline std::vector<Header> sent(Engine& e) {
  std::vector<Header> out;
  Engine::Packet p;
  while (e.next_packet(p)) {
    Header h;
    if (decode(p.bytes.data(), p.bytes.size(), h) == Errc::kOk) out.push_back(h);
  }
  return out;
}

inline std::vector<Engine::Received> received(Engine& e) {
  std::vector<Engine::Received> out;
  Engine::Received r;
  while (e.next_received(r)) out.push_back(std::move(r));
  return out;
}

}  // namespace otp::test
