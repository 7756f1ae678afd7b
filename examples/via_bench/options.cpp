#include "via_bench/options.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "via_bench/config.hpp"

namespace via_bench {
namespace {

bool g_cq_conns_option = false;

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--quick] [--out DIR] [--pin | --no-pin] [--spin-ns N]%s\n", argv0,
               g_cq_conns_option ? " [--cq-conns N,N,...]" : "");
  std::exit(2);
}

// "1,8,64": connection counts for the CQ table, each 1 .. kCqMax; empty on error.
std::vector<int> parse_conns(const std::string& list) {
  std::vector<int> out;
  size_t at = 0;
  while (at <= list.size()) {
    const size_t comma = std::min(list.find(',', at), list.size());
    const std::string item = list.substr(at, comma - at);
    char* end = nullptr;
    const long n = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || !end || *end || n < 1 || n > static_cast<long>(kCqMax)) return {};
    out.push_back(static_cast<int>(n));
    at = comma + 1;
  }
  return out;
}

void size_down(Options& o) {
  o.roundtrips = 2000;
  o.rounds = 2;
  o.bw_seconds = 0.01;
  o.bw_reps = 2;
  o.cq_seconds = 0.1;
  o.cq_reps = 2;
  o.cq_conns = {1, 8, 64};
}

}  // namespace

Options parse_options(int argc, char** argv, bool cq_conns) {
  g_cq_conns_option = cq_conns;
  Options o;
  std::vector<int> conns;  // --cq-conns, applied after --quick's defaults
  for (int i = 1; i < argc; ++i) {
    if (bench::take_common_option(argc, argv, i, o, usage)) continue;
    if (!cq_conns || std::string(argv[i]) != "--cq-conns" || i + 1 >= argc) usage(argv[0]);
    conns = parse_conns(argv[++i]);
    if (conns.empty()) usage(argv[0]);
  }
  if (o.quick) size_down(o);
  if (!conns.empty()) o.cq_conns = conns;
  return o;
}

}  // namespace via_bench
