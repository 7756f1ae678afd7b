// omniTransport engine (omnitransport/engine*): a client and a server engine
// driven by the input, one operation per step: a datagram (raw bytes, or a
// well-formed header with fuzzed fields and payload) into either engine;
// the packets each has queued delivered to the other, each one possibly
// dropped; time moving on and due timers run; sends, reclaims, close, fail.
// Contracts checked: a datagram decode() rejects changes no state, delivers
// nothing and sends nothing; every packet an engine emits decodes and fits
// its MTU; every delivery's payload fits the MTU; a zombie stays a zombie
// and refuses sends.
#include <fuzzer/FuzzedDataProvider.h>

#include <vector>

#include "fuzz/check.hpp"
#include "omnitransport/engine.hpp"

namespace {

using namespace otp;

std::vector<std::byte> datagram(FuzzedDataProvider& in, size_t mtu) {
  std::vector<std::byte> d;
  if (in.ConsumeBool()) {  // raw bytes, well-formed or not
    const auto raw = in.ConsumeBytes<uint8_t>(in.ConsumeIntegralInRange<size_t>(0, mtu + 2));
    for (uint8_t b : raw) d.push_back(std::byte{b});
    return d;
  }
  Header h;
  h.type = static_cast<PacketType>(in.ConsumeIntegralInRange<uint8_t>(1, 6));
  h.exactly_once = in.ConsumeBool();
  h.call_seq = in.ConsumeIntegral<uint8_t>();
  h.pkt_seq = in.ConsumeIntegral<uint8_t>();
  h.fragmented = in.ConsumeBool();
  const size_t payload = in.ConsumeIntegralInRange<size_t>(0, mtu - kHeaderSize);
  h.size = static_cast<uint16_t>(kHeaderSize + payload);
  d.resize(h.size, std::byte{0x5A});
  encode(h, d.data());
  return d;
}

// Everything `e` emits must be a well-formed packet within its MTU.
void check_emitted(Engine& e, std::vector<std::vector<std::byte>>& wire) {
  Engine::Packet p;
  while (e.next_packet(p)) {
    Header h;
    FUZZ_CHECK(decode(p.bytes.data(), p.bytes.size(), h) == Errc::kOk);
    FUZZ_CHECK(p.bytes.size() <= e.config().mtu);
    wire.push_back(p.bytes);
  }
}

void check_received(Engine& e) {
  Engine::Received r;
  while (e.next_received(r)) {
    if (r.what == Delivery::kData) FUZZ_CHECK(r.data.size() <= e.max_payload());
    e.recycle(std::move(r.data));
  }
}

void feed(Engine& e, const std::vector<std::byte>& d, uint64_t now) {
  Header h;
  const bool bad = decode(d.data(), d.size(), h) != Errc::kOk;
  const State before = e.state();
  const Stats s = e.stats();
  e.on_packet(d.data(), d.size(), now);
  if (!bad) return;
  FUZZ_CHECK(e.state() == before);
  FUZZ_CHECK(e.stats().deliveries == s.deliveries);
  FUZZ_CHECK(e.stats().packets_sent == s.packets_sent);
  if (before != State::kZombie) FUZZ_CHECK(e.stats().packets_malformed == s.packets_malformed + 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  EngineConfig c;
  c.mtu = kHeaderSize + in.ConsumeIntegralInRange<size_t>(1, 96);
  c.pool_buffers = in.ConsumeIntegralInRange<size_t>(1, 16);
  c.max_retries = in.ConsumeIntegralInRange<int>(0, 8);
  Engine client(Role::kClient, c), server(Role::kServer, c);
  Engine* engines[2] = {&client, &server};
  std::vector<std::vector<std::byte>> wire[2];  // [i]: emitted by engines[i]
  uint64_t now = 0;
  const std::byte chunk[256] = {};
  for (int step = 0; step < 256 && in.remaining_bytes() > 0; ++step) {
    const int side = in.ConsumeBool() ? 1 : 0;
    Engine& e = *engines[side];
    const bool was_zombie = e.state() == State::kZombie;
    switch (in.ConsumeIntegralInRange<int>(0, 6)) {
      case 0: feed(e, datagram(in, c.mtu), now); break;
      case 1: {  // the peer's packets arrive, each possibly lost
        auto& from = wire[1 - side];
        for (const auto& p : from) {
          if (!in.ConsumeBool()) feed(e, p, now);
        }
        from.clear();
        break;
      }
      case 2: {
        now += in.ConsumeIntegralInRange<uint64_t>(0, 3 * c.rto_max_ns);
        for (Engine* x : engines) {
          if (auto t = x->next_timer(); t && *t <= now) x->on_timer(now);
        }
        break;
      }
      case 3: {
        const size_t len = in.ConsumeIntegralInRange<size_t>(0, sizeof chunk);
        const Errc r = e.send(chunk, len, in.ConsumeBool(), in.ConsumeBool(), now);
        if (was_zombie) FUZZ_CHECK(r == Errc::kZombie);
        break;
      }
      case 4: (void)e.reclaim(now); break;
      case 5: e.close(now); break;
      case 6: e.fail(now); break;
    }
    if (was_zombie) FUZZ_CHECK(e.state() == State::kZombie);
    for (int i = 0; i < 2; ++i) {
      check_emitted(*engines[i], wire[i]);
      check_received(*engines[i]);
    }
  }
  return 0;
}
