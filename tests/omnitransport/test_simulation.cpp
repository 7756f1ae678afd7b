// Seeded end-to-end simulations of a client and a server engine over lossy
// in-order SimLinks in virtual time: random mixes of exactly-once and one-way
// calls of random sizes (fragmenting, sometimes exhausting the pool).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "sim_harness.hpp"

namespace otp::test {
namespace {

struct Call {
  bool eo = true;
  std::vector<std::byte> request;
  std::vector<size_t> chunks;  // sizes of the send() chunks, summing to request.size()
};

uint64_t fnv(const std::vector<std::byte>& v) {
  uint64_t h = 1469598103934665603ull;
  for (std::byte b : v) h = (h ^ std::to_integer<uint8_t>(b)) * 1099511628211ull;
  return h;
}

size_t log_uniform(std::mt19937_64& rng, size_t max) {
  const double x = std::uniform_real_distribution<double>(0.0, std::log(static_cast<double>(max)))(rng);
  return std::max<size_t>(1, static_cast<size_t>(std::exp(x)));
}

// The reply is a deterministic function of the request, so the client can check it.
std::vector<std::byte> reply_for(const std::vector<std::byte>& req) {
  const uint64_t h = fnv(req);
  std::mt19937_64 rng(h);
  const size_t n = log_uniform(rng, 100'000);
  std::vector<std::byte> r(n);
  for (size_t i = 0; i < n; ++i) r[i] = std::byte{static_cast<uint8_t>(h >> ((i % 8) * 8) ^ i)};
  return r;
}

std::vector<size_t> split(std::mt19937_64& rng, size_t n) {
  std::vector<size_t> c;
  const int parts = std::uniform_int_distribution<int>(1, 3)(rng);
  size_t left = n;
  for (int i = 1; i < parts && left > 1; ++i) {
    const size_t k = std::uniform_int_distribution<size_t>(0, left)(rng);
    c.push_back(k);
    left -= k;
  }
  c.push_back(left);
  return c;
}

struct SimResult {
  bool ok = true;
  std::string why;
  std::vector<uint64_t> latencies;  // exactly-once calls, virtual ns
  Stats client, server;
  uint64_t end_ns = 0;
  size_t oneways_delivered = 0, oneways_aborted = 0, oneways = 0;
};

SimResult simulate(uint64_t seed, double loss, int ncalls) {
  SimResult res;
  std::mt19937_64 rng(seed * 7919 + static_cast<uint64_t>(loss * 1000));
  EngineConfig cfg;
  const size_t mtus[] = {300, 1500, 9180};
  const size_t pools[] = {4, 16, 64};
  cfg.mtu = mtus[rng() % 3];
  cfg.pool_buffers = pools[rng() % 3];
  SimLinkConfig lc;
  lc.loss_rate = loss;
  lc.latency_ns = 20'000;
  lc.ns_per_byte = 1;  // ~8 Gbit/s
  lc.seed = seed * 2 + 1;
  SimLinkConfig lc2 = lc;
  lc2.seed = seed * 2 + 2;
  Pair p(cfg, lc, lc2);

  std::vector<Call> calls(static_cast<size_t>(ncalls));
  for (size_t i = 0; i < calls.size(); ++i) {
    Call& c = calls[i];
    c.eo = i + 1 == calls.size() || rng() % 3 != 0;  // the last call is exactly-once
    c.request.resize(log_uniform(rng, 100'000));
    for (auto& b : c.request) b = std::byte{static_cast<uint8_t>(rng())};
    if (c.request.size() >= 4) std::memcpy(c.request.data(), &i, 4);  // unique content
    c.chunks = split(rng, c.request.size());
    if (!c.eo) ++res.oneways;
  }

  // Server application: executes complete requests, replies to exactly-once ones.
  struct Executed {
    bool eo;
    std::vector<std::byte> body;
  };
  std::vector<Executed> executed;
  std::vector<std::byte> partial;
  bool partial_eo = false;
  bool in_progress = false;  // some buffers of an incomplete message were passed up
  size_t server_seen = 0;
  auto server_app = [&] {
    for (; server_seen < p.server_rx.size(); ++server_seen) {
      const auto r = p.server_rx[server_seen];
      if (r.what == Delivery::kAbort) {
        if (partial_eo || !in_progress) {
          res.ok = false;
          res.why = "ABORT without a partially delivered one-way";
        }
        partial.clear();
        in_progress = false;
        ++res.oneways_aborted;
        continue;
      }
      if (r.what != Delivery::kData) {
        res.ok = false;
        res.why = std::string("server got ") + to_string(r.what);
        continue;
      }
      partial_eo = r.exactly_once;
      partial.insert(partial.end(), r.data.begin(), r.data.end());
      in_progress = !r.complete;
      if (!r.complete) continue;
      executed.push_back({r.exactly_once, partial});
      if (r.exactly_once) {
        const auto reply = reply_for(partial);
        auto parts = split(rng, reply.size());
        size_t off = 0;
        for (size_t k = 0; k < parts.size(); ++k) {
          if (p.server.send(reply.data() + off, parts[k], k + 1 == parts.size(), true, p.now) != Errc::kOk) {
            res.ok = false;
            res.why = "server send failed in " + std::string(to_string(p.server.state()));
          }
          off += parts[k];
        }
      } else {
        ++res.oneways_delivered;
      }
      partial.clear();
    }
  };

  // Client application: one call at a time.
  size_t next = 0, client_seen = 0;
  uint64_t started = 0;
  std::vector<std::byte> reply;
  bool waiting = false;
  auto client_app = [&] {
    for (; client_seen < p.client_rx.size(); ++client_seen) {
      const auto& r = p.client_rx[client_seen];
      if (r.what != Delivery::kData || !waiting) {
        res.ok = false;
        res.why = std::string("client got ") + to_string(r.what) + " in " + to_string(p.client.state());
        continue;
      }
      reply.insert(reply.end(), r.data.begin(), r.data.end());
      if (r.complete) {
        if (reply != reply_for(calls[next - 1].request)) {
          res.ok = false;
          res.why = "reply corrupted for call " + std::to_string(next - 1);
        }
        res.latencies.push_back(p.now - started);
        waiting = false;
        reply.clear();
      }
    }
    while (!waiting && next < calls.size() && p.client.state() == State::kIdle) {
      const Call& c = calls[next++];
      started = p.now;
      size_t off = 0;
      for (size_t k = 0; k < c.chunks.size(); ++k) {
        if (p.client.send(c.request.data() + off, c.chunks[k], k + 1 == c.chunks.size(), c.eo, p.now) !=
            Errc::kOk) {
          res.ok = false;
          res.why = "client send failed";
        }
        off += c.chunks[k];
      }
      waiting = c.eo;
    }
  };

  const uint64_t limit = 120'000'000'000ull;  // 120 s virtual: "never deadlocks"
  client_app();
  while (res.ok && (next < calls.size() || waiting)) {
    if (!p.step()) {
      res.ok = false;
      res.why = "deadlock: nothing pending while a call is outstanding in client " +
                std::string(to_string(p.client.state())) + ", server " + to_string(p.server.state());
      break;
    }
    server_app();
    client_app();
    if (p.now > limit) {
      res.ok = false;
      res.why = "virtual time limit";
    }
    if (p.client.state() == State::kZombie || p.server.state() == State::kZombie) {
      res.ok = false;
      res.why = "zombie";
    }
  }
  if (res.ok && !p.quiesce(p.now + limit)) {
    res.ok = false;
    res.why = "no quiescence";
  }
  server_app();
  res.end_ns = p.now;
  res.client = p.client.stats();
  res.server = p.server.stats();
  if (!res.ok) return res;

  // Every exactly-once call executed exactly once, in order; one-ways at most
  // once; nothing else executed.
  size_t j = 0;
  for (const Executed& e : executed) {
    while (j < calls.size() && !(calls[j].eo == e.eo && calls[j].request == e.body)) {
      if (calls[j].eo) {
        res.ok = false;
        res.why = "exactly-once call " + std::to_string(j) + " not executed (or executed out of order/twice)";
        return res;
      }
      ++j;
    }
    if (j == calls.size()) {
      res.ok = false;
      res.why = "server executed something not called (duplicate or garbage)";
      return res;
    }
    ++j;
  }
  for (; j < calls.size(); ++j) {
    if (calls[j].eo) {
      res.ok = false;
      res.why = "exactly-once call " + std::to_string(j) + " never executed";
      return res;
    }
  }
  if (in_progress) {
    res.ok = false;
    res.why = "a partially delivered one-way was never aborted";
  }
  if (res.client.buffers_held != 0 || res.server.buffers_held != 0) {
    res.ok = false;
    res.why = "buffers leaked: client " + std::to_string(res.client.buffers_held) + ", server " +
              std::to_string(res.server.buffers_held);
  }
  if (p.client.state() != State::kIdle || p.server.state() != State::kIdle) {
    res.ok = false;
    res.why = "not idle at the end";
  }
  return res;
}

uint64_t percentile(std::vector<uint64_t> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

void sweep(int seeds, int ncalls) {
  for (double loss : {0.0, 0.01, 0.05, 0.10, 0.20}) {
    std::vector<uint64_t> lat;
    Stats c{}, s{};
    size_t ow = 0, owd = 0, owa = 0;
    for (int seed = 1; seed <= seeds; ++seed) {
      const SimResult r = simulate(static_cast<uint64_t>(seed), loss, ncalls);
      INFO("seed " << seed << " loss " << loss);
      REQUIRE(r.why == "");
      REQUIRE(r.ok);
      lat.insert(lat.end(), r.latencies.begin(), r.latencies.end());
      c.packets_sent += r.client.packets_sent;
      c.packets_retransmitted += r.client.packets_retransmitted + r.server.packets_retransmitted;
      c.nacks_sent += r.client.nacks_sent + r.server.nacks_sent;
      c.reclaims_sent += r.client.reclaims_sent + r.server.reclaims_sent;
      c.timeouts += r.client.timeouts + r.server.timeouts;
      c.call_acks_sent += r.client.call_acks_sent + r.server.call_acks_sent;
      s.packets_sent += r.server.packets_sent;
      ow += r.oneways;
      owd += r.oneways_delivered;
      owa += r.oneways_aborted;
    }
    std::ostringstream os;
    os << "loss " << loss * 100 << "%: " << lat.size() << " exactly-once calls, latency p50 "
       << percentile(lat, 0.5) / 1000 << " us, p99 " << percentile(lat, 0.99) / 1000 << " us (virtual); packets "
       << c.packets_sent + s.packets_sent << ", retransmitted " << c.packets_retransmitted << ", nacks "
       << c.nacks_sent << ", reclaims " << c.reclaims_sent << ", timeouts " << c.timeouts << ", call_acks "
       << c.call_acks_sent << "; one-ways " << ow << " delivered " << owd << " aborted " << owa;
    WARN(os.str());
  }
}

}  // namespace

TEST_CASE("simulation: 200 seeds x loss 0..20% keep exactly-once and at-most-once", "[otp][sim]") {
  sweep(200, 20);
}

TEST_CASE("simulation: 1000 seeds x loss 0..20%, longer call mixes", "[otp][sim][.slow]") {
  sweep(1000, 40);
}

}  // namespace otp::test
