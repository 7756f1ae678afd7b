// The options every two-process benchmark takes: --quick, --out DIR,
// --pin / --no-pin, --spin-ns N.
#pragma once

#include <cstdint>
#include <string>

namespace bench {

struct CommonOptions {
  bool quick = false;
  bool pin = true;       // each program sets its own default
  int64_t spin_ns = -1;  // -1: the NicConfig default (or CLAN_SPIN_NS)
  std::string out;       // empty: no result files
};

// If argv[i] is one of the common options, takes it (and its value,
// advancing i) and returns true; a missing or bad value calls `usage`.
bool take_common_option(int argc, char** argv, int& i, CommonOptions& o, void (*usage)(const char* argv0));

}  // namespace bench
