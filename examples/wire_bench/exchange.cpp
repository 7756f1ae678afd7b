#include "wire_bench/exchange.hpp"

#include <chrono>
#include <cstring>

#include "bench/stats.hpp"
#include "wire_bench/protocol.hpp"

namespace wire_bench {
namespace {

using Clock = std::chrono::steady_clock;

void stamp(std::vector<char>& buf, uint64_t n) { std::memcpy(buf.data(), &n, sizeof n); }
uint64_t number(const std::vector<char>& buf) {
  uint64_t n;
  std::memcpy(&n, buf.data(), sizeof n);
  return n;
}
// Every message holds at least its number.
uint32_t message_bytes(uint32_t size) { return size < 8 ? 8 : size; }

}  // namespace

bool ping(Link& link, uint32_t size, uint64_t warm, uint64_t count, Wait wait, std::vector<uint64_t>& samples) {
  const uint32_t n = message_bytes(size);
  std::vector<char> out(n, 'p'), in(n);
  for (uint64_t i = 0; i < warm + count; ++i) {
    stamp(out, i);
    const auto t0 = Clock::now();
    if (!link.send(out.data(), n) || !link.recv(in.data(), n, wait)) return false;
    const auto t1 = Clock::now();
    if (number(in) != i) return false;
    if (i >= warm) samples.push_back(bench::ns_between(t0, t1));
  }
  return true;
}

bool pong(Link& link, uint32_t size, uint64_t count, Wait wait) {
  const uint32_t n = message_bytes(size);
  std::vector<char> buf(n);
  for (uint64_t i = 0; i < count; ++i) {
    if (!link.recv(buf.data(), n, wait) || !link.send(buf.data(), n)) return false;
  }
  return true;
}

uint64_t stream_out(Link& link, uint32_t size, uint64_t count, Wait wait) {
  const uint32_t n = message_bytes(size);
  std::vector<char> out(n, 's'), ack(8);
  const auto t0 = Clock::now();
  for (uint64_t i = 0; i < count; ++i) {
    stamp(out, i);
    if (!link.send(out.data(), n)) return 0;
  }
  if (!link.recv(ack.data(), ack.size(), wait) || number(ack) != count) return 0;
  return bench::ns_between(t0, Clock::now());
}

int32_t stream_in(Link& link, uint32_t size, uint64_t count, Wait wait) {
  const uint32_t n = message_bytes(size);
  std::vector<char> in(n), ack(8);
  for (uint64_t i = 0; i < count; ++i) {
    if (!link.recv(in.data(), n, wait)) return kLinkFailed;
    if (number(in) != i) return kBadPayload;
  }
  stamp(ack, count);
  return link.send(ack.data(), ack.size()) ? 0 : kLinkFailed;
}

}  // namespace wire_bench
