#include "wire_bench/client.hpp"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "bench/channel.hpp"
#include "bench/format.hpp"
#include "bench/peer.hpp"
#include "bench/session.hpp"
#include "wire_bench/exchange.hpp"
#include "wire_bench/protocol.hpp"
#include "wire_bench/report.hpp"

namespace wire_bench {
namespace {

class Client {
 public:
  Client(const ClientOptions& o, bench::Channel ctl, WireResults& res) : o_(o), ctl_(std::move(ctl)), res_(res) {
    links_.resize(wires().size());
  }

  // Each wire's link, made through its own rendezvous.
  void make_links() {
    for (size_t w : o_.wires) {
      const std::string what = std::string(wires()[w].name) + " wire set-up";
      command({Op::kSetup, static_cast<uint32_t>(w)}, what);
      std::string error;
      links_[w] = wires()[w].connect(o_.server.host, ctl_, error);
      if (!links_[w]) bench::die(what + ": " + error);
      await(what);
    }
  }

  // One alternation: every round-trip cell, then every bandwidth cell.
  void round(int r) {
    bench::arm_watchdog(300);
    for (auto& c : res_.latency) round_trips(c);
    for (auto& c : res_.bandwidth) stream(c);
    for (const auto& c : res_.latency) {
      std::fprintf(stderr, "[wire] %d/%d %s %s %s: p50 %s us\n", r + 1, res_.alternations, wires()[c.wire].name,
                   wait_name(c.wait), bench::size_label(c.size).c_str(), bench::us(c.per_round.back().p50).c_str());
    }
    for (const auto& c : res_.bandwidth) {
      std::fprintf(stderr, "[wire] %d/%d %s %s stream: %s MB/s\n", r + 1, res_.alternations, wires()[c.wire].name,
                   bench::size_label(c.size).c_str(), bench::mbs(c.per_round.back()).c_str());
    }
  }

  void quit() {
    if (!ctl_.put(Command{})) bench::die("cannot send quit to the server");
  }

 private:
  void round_trips(LatencyCell& c) {
    const std::string what = cell_name(c.wire, c.wait, c.size) + " round trips";
    command({Op::kPong, static_cast<uint32_t>(c.wire), c.wait, c.size, res_.warm + res_.block}, what);
    std::vector<uint64_t> block;
    block.reserve(res_.block);
    if (!ping(*links_[c.wire], c.size, res_.warm, res_.block, c.wait, block)) bench::die(what + ": the wire failed");
    await(what);
    c.per_round.push_back(bench::summarize(block));
    c.all.insert(c.all.end(), block.begin(), block.end());
  }

  void stream(BandwidthCell& c) {
    const std::string what = cell_name(c.wire, c.wait, c.size) + " stream";
    const uint64_t count = c.bytes_per_round / c.size;
    command({Op::kSink, static_cast<uint32_t>(c.wire), c.wait, c.size, count}, what);
    const uint64_t ns = stream_out(*links_[c.wire], c.size, count, c.wait);
    if (ns == 0) bench::die(what + ": the wire failed");
    await(what);
    c.per_round.push_back(static_cast<double>(count * c.size) * 1e9 / static_cast<double>(ns));
  }

  static std::string cell_name(size_t wire, Wait wait, uint32_t size) {
    return std::string(wires()[wire].name) + " " + wait_name(wait) + " " + bench::size_label(size);
  }

  void command(const Command& c, const std::string& what) {
    if (!ctl_.put(c)) bench::die("cannot send the command for " + what);
  }

  void await(const std::string& what) {
    Reply r;
    if (!ctl_.get(r, std::chrono::seconds(120))) bench::die("no reply from the server after " + what);
    if (r.status != 0) bench::die("the server failed in " + what + ": status " + std::to_string(r.status));
  }

  const ClientOptions& o_;
  bench::Channel ctl_;
  WireResults& res_;
  std::vector<std::unique_ptr<Link>> links_;
};

// The cells in the order every round measures them.
void plan(const ClientOptions& o, WireResults& res) {
  res.alternations = std::max(o.alternations, 1);
  res.block = std::max<uint64_t>(o.roundtrips / static_cast<uint64_t>(res.alternations), 1);
  res.warm = std::max<uint64_t>(100, res.block / 10);
  res.quick = o.common.quick;
  res.server = o.server.host + ":" + o.server.port;
  for (size_t w : o.wires) {
    for (Wait wait : {Wait::kBusy, Wait::kBlocking}) {
      for (uint32_t size : o.sizes) res.latency.push_back({w, wait, size, {}, {}});
    }
    res.bandwidth.push_back({w, Wait::kBlocking, o.stream_size, o.stream_bytes, {}});
  }
}

}  // namespace

int run_client(const ClientOptions& o) {
  bench::set_program_name("bench_wire");
  signal(SIGPIPE, SIG_IGN);
  WireResults res;
  res.machine = bench::machine_info();
  res.clock_ns = bench::clock_overhead_ns();
  plan(o, res);
  std::string error;
  const int fd = connect_tcp_to(o.server, error);
  if (fd < 0) bench::die("control channel: " + error);
  Client client(o, bench::Channel(fd), res);
  client.make_links();
  print_wire_header(o, res);
  for (int r = 0; r < res.alternations; ++r) client.round(r);
  client.quit();
  bench::disarm_watchdog();
  print_wire_tables(res);
  if (o.common.out.empty()) return 0;
  if (!write_wire_results(o, res)) return 1;
  std::fprintf(stderr, "bench_wire: results in %s/{wire_latency.csv, wire_bandwidth.csv, wire.json}\n",
               o.common.out.c_str());
  return 0;
}

}  // namespace wire_bench
