// How bench_clan_wire's client finds its server: one line naming the
// server's NIC, its wire address and the cookie of its region. The server
// prints it and writes it to a file (written whole, then renamed into
// place), which is all two network namespaces need to share: a directory.
#pragma once

#include <optional>
#include <string>

#include "clan_emul/cookie.hpp"
#include "clan_emul/deadline.hpp"

namespace clan_wire_bench {

struct Rendezvous {
  uint64_t nic_id = 0;
  std::string address;  // "IP:port"
  clan::RdmaCookie cookie{};
};

// "clan-wire nic=<16 hex> address=<IP:port> cookie=<96 hex>"
std::string format_rendezvous(const Rendezvous& r);
std::optional<Rendezvous> parse_rendezvous(const std::string& line);

// Writes `path` atomically; false (with words on stderr) if it cannot.
bool write_rendezvous(const std::string& path, const Rendezvous& r);
// Waits for `path` to appear and parse (polling it now and then): nullopt
// at the deadline, or if it holds something else.
std::optional<Rendezvous> read_rendezvous(const std::string& path, clan::Deadline deadline);

}  // namespace clan_wire_bench
