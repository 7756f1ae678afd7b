#include "clan_wire_bench/server.hpp"

#include <cstdio>
#include <cstring>

#include "clan_wire_bench/side.hpp"

namespace clan_wire_bench {
namespace {

bool link_back(Side& s) {
  Hello h;
  std::memcpy(&h, s.at(kHelloAt), sizeof h);
  h.address[sizeof h.address - 1] = '\0';
  return s.link(h.nic_id, h.address, h.cookie);
}

// Credits every chunk the client counts in until `count` more arrived.
bool consume(Side& s, uint64_t& consumed, uint32_t count) {
  const uint64_t target = consumed + count;
  while (consumed < target) {
    if (!s.await_counter(consumed + 1)) return false;
    consumed = s.word(kCounterAt);
    if (!s.count(consumed)) return false;
  }
  return true;
}

// Carries out one bell; false when the server ends (`quit` says how).
bool answer(Side& s, uint64_t b, uint64_t& consumed, bool& quit) {
  const uint32_t size = bell_size(b);
  switch (bell_op(b)) {
    case Op::kHello:
      return link_back(s) && s.ring(b);
    case Op::kPing:
      return size <= kMaxMessage && (size == 0 || s.put(kMessageAt, s.at(kMessageAt), size)) && s.ring(b);
    case Op::kMode:
      s.set_mode(static_cast<clan::WaitMode>(size));
      return s.ring(b);
    case Op::kStream:
      return consume(s, consumed, size);
    case Op::kQuit:
      quit = true;
      (void)s.ring(b);
      return false;
  }
  std::fprintf(stderr, "bench_clan_wire: server: unknown bell %016llx\n", static_cast<unsigned long long>(b));
  return false;
}

}  // namespace

int run_server(const ServerOptions& o) {
  Side s;
  if (!s.open("wire-server", o.listen, o.spin_ns)) return 1;
  const Rendezvous r = s.rendezvous();
  if (o.announce) {
    std::printf("%s\n", format_rendezvous(r).c_str());
    std::fflush(stdout);
  }
  if (!o.rendezvous.empty() && !write_rendezvous(o.rendezvous, r)) return 1;
  uint64_t last = 0, consumed = 0;
  bool quit = false;
  for (;;) {
    const uint64_t b = s.next_bell(last);
    if (b == 0) {
      std::fprintf(stderr, "bench_clan_wire: server: the client was silent too long\n");
      return 3;
    }
    last = b;
    if (!answer(s, b, consumed, quit)) return quit ? 0 : 4;
  }
}

}  // namespace clan_wire_bench
