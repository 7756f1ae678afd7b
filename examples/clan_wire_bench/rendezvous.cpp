#include "clan_wire_bench/rendezvous.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace clan_wire_bench {
namespace {

std::string hex(const void* data, size_t len) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < len; ++i) {
    const auto b = static_cast<const unsigned char*>(data)[i];
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

bool unhex(const std::string& text, void* data, size_t len) {
  if (text.size() != 2 * len) return false;
  for (size_t i = 0; i < len; ++i) {
    unsigned v = 0;
    if (std::sscanf(text.c_str() + 2 * i, "%2x", &v) != 1) return false;
    static_cast<unsigned char*>(data)[i] = static_cast<unsigned char>(v);
  }
  return true;
}

// The value of `key=` among the line's words, or empty.
std::string field(const std::string& line, const std::string& key) {
  std::istringstream words(line);
  for (std::string w; words >> w;) {
    if (w.rfind(key + "=", 0) == 0) return w.substr(key.size() + 1);
  }
  return {};
}

}  // namespace

std::string format_rendezvous(const Rendezvous& r) {
  char nic[17];
  std::snprintf(nic, sizeof nic, "%016llx", static_cast<unsigned long long>(r.nic_id));
  return "clan-wire nic=" + std::string(nic) + " address=" + r.address + " cookie=" + hex(&r.cookie, sizeof r.cookie);
}

std::optional<Rendezvous> parse_rendezvous(const std::string& line) {
  if (line.rfind("clan-wire ", 0) != 0) return std::nullopt;
  Rendezvous r;
  const std::string nic = field(line, "nic");
  char* end = nullptr;
  r.nic_id = std::strtoull(nic.c_str(), &end, 16);
  r.address = field(line, "address");
  if (nic.size() != 16 || *end != '\0' || r.address.empty() ||
      !unhex(field(line, "cookie"), &r.cookie, sizeof r.cookie)) {
    return std::nullopt;
  }
  return r;
}

bool write_rendezvous(const std::string& path, const Rendezvous& r) {
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    out << format_rendezvous(r) << "\n";
    if (!out.flush()) {
      std::fprintf(stderr, "bench_clan_wire: cannot write %s: %s\n", partial.c_str(), std::strerror(errno));
      return false;
    }
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    std::fprintf(stderr, "bench_clan_wire: cannot rename %s to %s: %s\n", partial.c_str(), path.c_str(),
                 std::strerror(errno));
    return false;
  }
  return true;
}

std::optional<Rendezvous> read_rendezvous(const std::string& path, clan::Deadline deadline) {
  for (;;) {
    std::ifstream in(path);
    std::string line;
    if (in && std::getline(in, line)) return parse_rendezvous(line);
    if (deadline.expired()) return std::nullopt;
    // The server is another program, perhaps on another host: no signal
    // reaches us but the file itself.
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace clan_wire_bench
