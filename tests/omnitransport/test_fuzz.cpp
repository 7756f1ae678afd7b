// Fuzz-style: seeded random and mutated datagrams into both engines. No
// crash (run under ASan/UBSan by run-tests), and a datagram that fails
// decode() never changes state or delivers anything.
#include <catch2/catch.hpp>

#include <random>

#include "wire.hpp"

namespace otp::test {

TEST_CASE("fuzz: 100000 random and mutated datagrams into client and server engines", "[otp][fuzz]") {
  std::mt19937_64 rng(20260101);
  EngineConfig c;
  c.mtu = kHeaderSize + 64;
  c.pool_buffers = 8;
  Engine client(Role::kClient, c), server(Role::kServer, c);
  uint64_t now = 0;
  size_t malformed = 0, zombies = 0;
  for (int i = 0; i < 100'000; ++i) {
    now += rng() % 3'000'000;
    std::vector<std::byte> d;
    const int kind = static_cast<int>(rng() % 4);
    if (kind == 0) {  // pure noise
      d.resize(rng() % 40);
      for (auto& b : d) b = std::byte(static_cast<uint8_t>(rng()));
    } else {  // a plausible packet, maybe mutated
      d = pkt(static_cast<PacketType>(1 + rng() % 6), static_cast<uint8_t>(rng() % 4),
              static_cast<uint8_t>(rng() % 6), rng() % 2 == 0, rng() % 30);
      if (kind >= 2) {
        const int flips = 1 + static_cast<int>(rng() % 3);
        for (int f = 0; f < flips; ++f) d[rng() % d.size()] ^= std::byte(static_cast<uint8_t>(1u << (rng() % 8)));
        if (rng() % 8 == 0) d.resize(rng() % (d.size() + 4));
      }
    }
    Header h;
    const bool bad = decode(d.data(), d.size(), h) != Errc::kOk;
    malformed += bad;
    for (Engine* e : {&client, &server}) {
      const State before = e->state();
      const auto before_deliveries = e->stats().deliveries;
      const auto before_sent = e->stats().packets_sent;
      const auto before_malformed = e->stats().packets_malformed;
      e->on_packet(d.data(), d.size(), now);
      if (bad && before != State::kZombie) REQUIRE(e->stats().packets_malformed == before_malformed + 1);
      if (bad) {
        REQUIRE(e->state() == before);
        REQUIRE(e->stats().deliveries == before_deliveries);
        REQUIRE(e->stats().packets_sent == before_sent);
      }
      if (auto t = e->next_timer(); t && *t <= now) e->on_timer(now);
      received(*e);
      sent(*e);
    }
    // Keep the machines moving: sends where the state allows them.
    if (rng() % 16 == 0) (void)client.send("abc", 3, rng() % 2 == 0, rng() % 2 == 0, now);
    if (rng() % 16 == 0) (void)server.send("xyz", 3, rng() % 2 == 0, true, now);
    // Random control traffic may exhaust the retries: start a fresh connection.
    if (client.state() == State::kZombie) client = Engine(Role::kClient, c), ++zombies;
    if (server.state() == State::kZombie) server = Engine(Role::kServer, c), ++zombies;
    REQUIRE(client.stats().buffers_held <= 1000);
    REQUIRE(server.stats().buffers_held <= 1000);
  }
  CHECK(malformed > 30'000);
  INFO("zombies " << zombies);
}

}  // namespace otp::test
