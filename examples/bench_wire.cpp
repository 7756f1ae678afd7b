// bench_wire: round trips and bandwidth over a wire between two hosts, one
// process on each, beside a bare TCP socket over the same link (the
// reference every wire is compared with). The server runs on one host, the
// client on the other; scripts/comparison/cross_host.py runs them in the two
// hosts of scripts/two_hosts.sh.
//   - round trips of 8 B to 64 KiB, the receiver busy polling (a call that
//     never sleeps, in a loop) and blocking (asleep in the kernel);
//   - bandwidth of 64 KiB messages from client to server.
// Every wire, wait and size is measured in every alternation, in the same
// order, so that drift hits all alike.
//
// Usage: bench_wire server [--listen HOST[:PORT]] [--accept-seconds N]
//        bench_wire client HOST:PORT [--wires tcp[,...]] [--quick] [--roundtrips N]
//                   [--alternations N] [--stream-mib N] [--out DIR]
// The server prints "listening HOST:PORT" first, serves one client and
// exits 0 when the client quits. The client prints Markdown tables to
// stdout and progress to stderr; --out DIR gets wire_latency.csv,
// wire_bandwidth.csv and wire.json. The exit status is non-zero only when
// something failed.
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "bench/options.hpp"
#include "fabric_bench/program.hpp"
#include "wire_bench/client.hpp"
#include "wire_bench/server.hpp"
#include "wire_bench/wire.hpp"

namespace {

using wire_bench::ClientOptions;
using wire_bench::ServerOptions;

[[noreturn]] void usage(const char* argv0) {
  fabric_bench::print_usage(argv0,
                            "server [--listen HOST[:PORT]] [--accept-seconds N]\n"
                            "       client HOST:PORT [--wires tcp[,...]] [--quick] [--roundtrips N] "
                            "[--alternations N] [--stream-mib N] [--out DIR]");
}

long long number(int argc, char** argv, int& i, long long min) {
  return fabric_bench::option_number(argc, argv, i, usage, min);
}

std::vector<size_t> parse_wires(const std::string& list, const char* argv0) {
  std::vector<size_t> out;
  std::stringstream ss(list);
  for (std::string name; std::getline(ss, name, ',');) {
    const wire_bench::WireKind* w = wire_bench::find_wire(name);
    if (!w) {
      std::fprintf(stderr, "bench_wire: unknown wire '%s'\n", name.c_str());
      usage(argv0);
    }
    out.push_back(static_cast<size_t>(w - wire_bench::wires().data()));
  }
  if (out.empty()) usage(argv0);
  return out;
}

int server_main(int argc, char** argv) {
  ServerOptions o;
  o.listen.host = "0.0.0.0";
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--listen" && i + 1 < argc) {
      if (!wire_bench::parse_host_port(argv[++i], o.listen)) usage(argv[0]);
    } else if (a == "--accept-seconds") {
      o.accept_seconds = static_cast<int>(number(argc, argv, i, 1));
    } else {
      usage(argv[0]);
    }
  }
  return wire_bench::run_server(o);
}

int client_main(int argc, char** argv) {
  ClientOptions o;
  o.wires = {0};
  if (argc < 3 || !wire_bench::parse_host_port(argv[2], o.server)) usage(argv[0]);
  bool rt = false, mib = false, alt = false;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (bench::take_common_option(argc, argv, i, o.common, usage)) continue;
    if (a == "--wires" && i + 1 < argc) o.wires = parse_wires(argv[++i], argv[0]);
    else if (a == "--roundtrips") o.roundtrips = static_cast<uint64_t>(number(argc, argv, i, 1)), rt = true;
    else if (a == "--alternations") o.alternations = static_cast<int>(number(argc, argv, i, 1)), alt = true;
    else if (a == "--stream-mib") o.stream_bytes = static_cast<uint64_t>(number(argc, argv, i, 1)) << 20, mib = true;
    else usage(argv[0]);
  }
  if (o.common.quick) {
    if (!rt) o.roundtrips = 2000;
    if (!mib) o.stream_bytes = 64ull << 20;
    if (!alt) o.alternations = 2;
  }
  return wire_bench::run_client(o);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "server") return server_main(argc, argv);
  if (mode == "client") return client_main(argc, argv);
  usage(argv[0]);
}
