// bench_clan_wire: the remote wire's raw latency and bandwidth through
// clan_emul's API, as libfabric's fi_pingpong measures its own: two NICs
// with wires (libfabric tcp provider, FI_EP_MSG), each exporting a region
// with tripwires on a bell word and a counter word.
//   - Ping-pong: the client writes a message (8 B, 64 B, 1 KiB, 8 KiB) and
//     then a bell word into the server's region; the server waits on its
//     tripwire (Tripwire::wait in the wait mode under test) and answers
//     the same way; the client times the round trip. Wait modes poll,
//     adaptive and block are alternated round by round.
//   - Stream: 64 KiB writes into a ring in the server's region, each
//     followed by a count word; the server credits each with a word back.
//
// Usage:
//   bench_clan_wire [options]                       loopback: forks the server on 127.0.0.1
//   bench_clan_wire --serve IP[:PORT] [--rendezvous PATH]
//   bench_clan_wire --connect PATH [--listen IP] [options]
// The server prints its rendezvous line (NIC id, wire address, cookie) and
// writes it to PATH; the client reads PATH (a shared directory is all two
// network namespaces need) and tells the server its own over the wire.
// Options: --modes poll,adaptive,block (default: CLAN_WAIT_MODE, else all
// three) --sizes 8,64,1024,8192 (0: the bell alone) --roundtrips N --rounds N --chunks N
// --chunk-bytes N --quick --spin-ns N --out DIR. Tables go to stdout
// (Markdown), progress to stderr; --out DIR gets clan_wire_pingpong.csv,
// clan_wire_stream.csv and clan_wire.json.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "bench/machine.hpp"
#include "bench/peer.hpp"
#include "clan_wire_bench/client.hpp"
#include "clan_wire_bench/layout.hpp"
#include "clan_wire_bench/report.hpp"
#include "clan_wire_bench/server.hpp"
#include "fabric_bench/program.hpp"

namespace {

using namespace clan_wire_bench;

struct Options {
  bench::CommonOptions common;
  ServerOptions server;
  ClientOptions client;
  bool serve = false;
  bool connect = false;
};

[[noreturn]] void usage(const char* argv0) {
  fabric_bench::print_usage(argv0,
                            "[--serve IP[:PORT] [--rendezvous PATH] | --connect PATH [--listen IP]] "
                            "[--modes poll,adaptive,block] [--sizes 8,64,1024,8192] [--roundtrips N] [--rounds N] "
                            "[--chunks N] [--chunk-bytes N] [--quick] [--spin-ns N] [--out DIR]");
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

void take_modes(const std::string& list, Options& o, const char* argv0) {
  o.client.modes.clear();
  for (const auto& word : split(list)) {
    auto m = clan::parse_wait_mode(word);
    if (!m) usage(argv0);
    o.client.modes.push_back(*m);
  }
}

void take_sizes(const std::string& list, Options& o, const char* argv0) {
  o.client.sizes.clear();
  for (const auto& word : split(list)) {
    const long v = std::strtol(word.c_str(), nullptr, 10);
    if (v < 0 || static_cast<size_t>(v) > kMaxMessage) usage(argv0);
    o.client.sizes.push_back(static_cast<uint32_t>(v));
  }
}

std::string value(int argc, char** argv, int& i) {
  if (i + 1 >= argc) usage(argv[0]);
  return argv[++i];
}

void defaults(Options& o, bool rt, bool chunks) {
  ClientOptions& c = o.client;
  if (c.modes.empty()) {
    const char* env = std::getenv("CLAN_WAIT_MODE");
    if (auto m = clan::parse_wait_mode(env ? env : ""); m) c.modes = {*m};
    else c.modes = {clan::WaitMode::kPoll, clan::WaitMode::kAdaptive, clan::WaitMode::kBlock};
  }
  if (c.sizes.empty()) c.sizes = {8, 64, 1024, 8192};
  if (!rt) c.roundtrips = o.common.quick ? 500 : 3000;
  if (!chunks) c.chunks = o.common.quick ? 200 : 2000;
  c.warm = std::max<uint64_t>(50, c.roundtrips / 10);
  c.rounds = std::max(c.rounds, 1);
  o.server.spin_ns = c.spin_ns = o.common.spin_ns;
}

Options parse(int argc, char** argv) {
  Options o;
  o.client.chunk = 64 * 1024;
  o.client.rounds = 3;
  bool rt = false, chunks = false;
  fabric_bench::parse_options(argc, argv, o.common, usage, [&](const std::string& a, int& i) {
    if (a == "--serve") o.serve = true, o.server.listen = value(argc, argv, i);
    else if (a == "--rendezvous") o.server.rendezvous = value(argc, argv, i);
    else if (a == "--connect") o.connect = true, o.client.rendezvous = value(argc, argv, i);
    else if (a == "--listen") o.client.listen = value(argc, argv, i);
    else if (a == "--modes") take_modes(value(argc, argv, i), o, argv[0]);
    else if (a == "--sizes") take_sizes(value(argc, argv, i), o, argv[0]);
    else if (a == "--roundtrips") o.client.roundtrips = fabric_bench::option_number(argc, argv, i, usage, 1), rt = true;
    else if (a == "--rounds") o.client.rounds = static_cast<int>(fabric_bench::option_number(argc, argv, i, usage, 1));
    else if (a == "--chunks") o.client.chunks = static_cast<uint32_t>(fabric_bench::option_number(argc, argv, i, usage)), chunks = true;
    else if (a == "--chunk-bytes") o.client.chunk = static_cast<uint32_t>(fabric_bench::option_number(argc, argv, i, usage, 8));
    else return false;
    return true;
  });
  if ((o.serve && o.connect) || o.client.chunk > kMaxChunk) usage(argv[0]);
  defaults(o, rt, chunks);
  return o;
}

// The client's whole run and report: the exit status.
int measure(const Options& o, RunInfo& info) {
  ClientResults r;
  info.clock_ns = bench::clock_overhead_ns();
  if (int e = run_client(o.client, r); e != 0) return e;
  print_wire_header(o.common, o.client, info, r);
  print_wire_tables(r, o.client);
  return o.common.out.empty() || write_wire_results(o.common, o.client, info, r) ? 0 : 1;
}

// Loopback: the server forked on 127.0.0.1, its rendezvous in a private
// temporary directory.
int loopback(Options& o, RunInfo& info) {
  char dir[] = "/tmp/clan-wire-XXXXXX";
  if (!::mkdtemp(dir)) {
    std::perror("bench_clan_wire: mkdtemp");
    return 1;
  }
  o.server.rendezvous = o.client.rendezvous = std::string(dir) + "/rendezvous";
  o.server.announce = false;
  const pid_t server = bench::spawn_peer([&] { return run_server(o.server); });
  if (server < 0) return 1;
  bench::arm_watchdog(300);
  int status = measure(o, info);
  const int peer = bench::reap_peer(server, std::chrono::seconds(10));
  bench::disarm_watchdog();
  if (peer != 0) std::fprintf(stderr, "bench_clan_wire: the server ended with status %d\n", peer);
  ::unlink(o.server.rendezvous.c_str());
  ::rmdir(dir);
  return status != 0 ? status : (peer != 0 ? 9 : 0);
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  if (o.serve) return run_server(o.server);
  RunInfo info;
  info.machine = bench::machine_info();
  if (o.connect) {
    info.topology = "two programs (client read " + o.client.rendezvous + ")";
    return measure(o, info);
  }
  info.topology = "loopback, server forked";
  return loopback(o, info);
}
