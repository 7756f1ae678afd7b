#include "bench/options.hpp"

#include <cstdlib>

namespace bench {

bool take_common_option(int argc, char** argv, int& i, CommonOptions& o, void (*usage)(const char* argv0)) {
  const std::string a = argv[i];
  const bool has_value = i + 1 < argc;
  if (a == "--quick") {
    o.quick = true;
  } else if (a == "--pin" || a == "--no-pin") {
    o.pin = a == "--pin";
  } else if (a == "--out") {
    if (!has_value) {
      usage(argv[0]);
      return true;
    }
    o.out = argv[++i];
  } else if (a == "--spin-ns") {
    if (!has_value) {
      usage(argv[0]);
      return true;
    }
    char* end = nullptr;
    o.spin_ns = std::strtoll(argv[++i], &end, 10);
    if (!end || *end || o.spin_ns < 0) usage(argv[0]);
  } else {
    return false;
  }
  return true;
}

}  // namespace bench
