#include "clan_wire_bench/client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "bench/peer.hpp"
#include "clan_wire_bench/side.hpp"

namespace clan_wire_bench {
namespace {

using Clock = std::chrono::steady_clock;

// The local IP the kernel routes to `server` ("IP:port") from: where the
// server can reach this side back, in whatever namespace it runs.
std::string local_ip_towards(const std::string& server) {
  const std::string ip = server.substr(0, server.rfind(':'));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);
  if (inet_pton(AF_INET, ip.c_str(), &to.sin_addr) != 1) return "127.0.0.1";
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in me{};
  socklen_t len = sizeof me;
  char text[INET_ADDRSTRLEN] = "127.0.0.1";
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&me), &len) == 0) {
    inet_ntop(AF_INET, &me.sin_addr, text, sizeof text);
  }
  if (fd >= 0) ::close(fd);
  return text;
}

class Client {
 public:
  explicit Client(const ClientOptions& o) : o_(o) {}
  int connect(ClientResults& out);
  bool mode(clan::WaitMode m);
  bool ping_block(uint32_t size, std::vector<uint64_t>& samples);
  double stream_block();  // bytes per second, 0 on failure
  // The server answers before it ends, so the bell is not lost with the link.
  void quit() {
    const uint64_t b = bell(Op::kQuit, 0, ++seq_);
    if (side_.ring(b)) (void)side_.await_bell(b, clan::Deadline::after(std::chrono::seconds(5)));
  }

 private:
  bool exchange(uint64_t b) { return side_.ring(b) && side_.await_bell(b); }

  const ClientOptions& o_;
  Side side_;
  uint32_t seq_ = 0;
  uint64_t produced_ = 0;
  std::vector<std::byte> message_ = std::vector<std::byte>(kMaxMessage, std::byte{0x6d});
  std::vector<std::byte> chunk_ = std::vector<std::byte>(kMaxChunk, std::byte{0x73});
};

int Client::connect(ClientResults& out) {
  const auto r = read_rendezvous(o_.rendezvous, clan::Deadline::after(kPeerPatience));
  if (!r) {
    std::fprintf(stderr, "bench_clan_wire: no server's rendezvous in %s\n", o_.rendezvous.c_str());
    return 5;
  }
  const std::string ip = o_.listen.empty() ? local_ip_towards(r->address) : o_.listen;
  if (!side_.open("wire-client", ip, o_.spin_ns) || !side_.link(r->nic_id, r->address, r->cookie)) return 6;
  const Rendezvous me = side_.rendezvous();
  Hello h{};
  h.nic_id = me.nic_id;
  std::snprintf(h.address, sizeof h.address, "%s", me.address.c_str());
  h.cookie = me.cookie;
  if (!side_.put(kHelloAt, &h, sizeof h) || !exchange(bell(Op::kHello, 0, ++seq_))) return 7;
  out.server_address = r->address;
  out.client_address = me.address;
  out.spin_ns = side_.spin_budget().count();
  return 0;
}

bool Client::mode(clan::WaitMode m) {
  side_.set_mode(m);
  return exchange(bell(Op::kMode, static_cast<uint32_t>(m), ++seq_));
}

bool Client::ping_block(uint32_t size, std::vector<uint64_t>& samples) {
  for (uint64_t i = 0; i < o_.warm + o_.roundtrips; ++i) {
    const uint64_t b = bell(Op::kPing, size, ++seq_);
    const auto t0 = Clock::now();
    if ((size != 0 && !side_.put(kMessageAt, message_.data(), size)) || !exchange(b)) return false;
    const auto t1 = Clock::now();
    if (i >= o_.warm) samples.push_back(bench::ns_between(t0, t1));
  }
  return true;
}

double Client::stream_block() {
  if (!side_.ring(bell(Op::kStream, o_.chunks, ++seq_))) return 0;
  const uint64_t start = produced_;
  const auto t0 = Clock::now();
  for (uint32_t i = 0; i < o_.chunks; ++i) {
    // Room for one more chunk once the server credited the oldest in the ring.
    if (produced_ >= kRingSlots && !side_.await_counter(produced_ - kRingSlots + 1)) return 0;
    const size_t slot = produced_ % kRingSlots;
    if (!side_.put(kRingAt + slot * kMaxChunk, chunk_.data(), o_.chunk)) return 0;
    if (!side_.count(++produced_)) return 0;
  }
  if (!side_.await_counter(produced_)) return 0;
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return static_cast<double>((produced_ - start) * o_.chunk) / s;
}

PingCell& cell(ClientResults& out, clan::WaitMode m, uint32_t size) {
  for (auto& c : out.ping) {
    if (c.mode == m && c.size == size) return c;
  }
  return out.ping.emplace_back(PingCell{m, size, {}, {}});
}

StreamCell& cell(ClientResults& out, clan::WaitMode m) {
  for (auto& c : out.stream) {
    if (c.mode == m) return c;
  }
  return out.stream.emplace_back(StreamCell{m, {}});
}

// One round: every mode, every size, then a stream, in the same order each round.
bool round_of(Client& c, const ClientOptions& o, ClientResults& out, int round) {
  for (clan::WaitMode m : o.modes) {
    if (!c.mode(m)) return false;
    for (uint32_t size : o.sizes) {
      std::vector<uint64_t> block;
      if (!c.ping_block(size, block)) return false;
      PingCell& p = cell(out, m, size);
      p.per_round.push_back(bench::summarize(block));
      p.all.insert(p.all.end(), block.begin(), block.end());
      std::fprintf(stderr, "[clan_wire] round %d %-8s %5u B  p50 %.2f us  p99 %.2f us\n", round + 1,
                   clan::wait_mode_name(m), size, p.per_round.back().p50 / 1e3, p.per_round.back().p99 / 1e3);
    }
    const double bw = o.chunks ? c.stream_block() : -1;
    if (bw == 0) return false;
    if (bw > 0) {
      cell(out, m).bytes_per_s.push_back(bw);
      std::fprintf(stderr, "[clan_wire] round %d %-8s stream %u x %u B  %.3f GB/s\n", round + 1,
                   clan::wait_mode_name(m), o.chunks, o.chunk, bw / 1e9);
    }
  }
  return true;
}

}  // namespace

int run_client(const ClientOptions& o, ClientResults& out) {
  Client c(o);
  if (int e = c.connect(out); e != 0) return e;
  for (int round = 0; round < o.rounds; ++round) {
    bench::arm_watchdog(300);
    if (!round_of(c, o, out, round)) {
      std::fprintf(stderr, "bench_clan_wire: the exchange with the server failed in round %d\n", round + 1);
      return 8;
    }
  }
  c.quit();
  return 0;
}

}  // namespace clan_wire_bench
