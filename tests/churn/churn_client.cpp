// churn_client: many short-lived clients of one server, made quickly; or
// one client with many connections.
//
//   churn_client --address giop:<clan|otp|via>:NODE:PORT --ior IOR --clients N [--first K]
//   churn_client --address ... --ior IOR --hold N
//
// Each client is a peer of its own as the server sees it: a NIC of its own
// (a fresh NIC id) under an OOB node name of its own ("churn<pid>x<K+i>"),
// made through the transport's own connect path (the plugin's address
// class), one echoString call over it (a GIOP 1.2 request the server's ORB
// answers), then the connection closed and the NIC and node let go of, as a
// client process does when it ends. No ORB runs here: a process per client
// would take seconds per thousand clients.
//
// Prints "done N" and exits 0 when every call got its reply; otherwise prints
// what went wrong on stderr and exits 1 (2: bad arguments).
//
// --hold N: one client (one node) opens N connections one after another, each
// making a call, prints "connected K refused M" (a refusal must come at once:
// a connect that times out is a failure), and holds its connections until
// its stdin ends.
#include <cstdint>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "orb_transports/clan/clan_address.hpp"
#include "orb_transports/common/fabric.hpp"
#include "orb_transports/common/node_address.hpp"
#include "orb_transports/otp/otp_address.hpp"
#include "orb_transports/via/via_address.hpp"
#include "orb_transports/via/via_nic.hpp"
#include "tools/clanorb-ior/ior_structure.hpp"
#include "tools/clanorb-ior/ior_text.hpp"

namespace {

using Bytes = std::vector<uint8_t>;

omni_time_t after_seconds(unsigned long s) {
  omni_time_t t;
  omni_thread::get_time(t, omni_time_t(s, 0));
  return t;
}

// Little-endian CDR, aligned relative to the start of the GIOP message.
struct CdrOut {
  Bytes b;
  void align(size_t n) { b.resize((b.size() + n - 1) / n * n, 0); }
  void octet(uint8_t v) { b.push_back(v); }
  void ushort(uint16_t v) {
    align(2);
    for (int i = 0; i < 2; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void ulong(uint32_t v) {
    align(4);
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void octets(const Bytes& v) {
    ulong(static_cast<uint32_t>(v.size()));
    b.insert(b.end(), v.begin(), v.end());
  }
  void string(const std::string& s) {
    ulong(static_cast<uint32_t>(s.size() + 1));
    b.insert(b.end(), s.begin(), s.end());
    b.push_back(0);
  }
};

constexpr size_t kGiopHeader = 12;

// A GIOP 1.2 Request for echo::echoString(message), little-endian.
Bytes echo_request(uint32_t request_id, const Bytes& object_key, const std::string& message) {
  CdrOut m;
  for (char c : std::string("GIOP")) m.octet(static_cast<uint8_t>(c));
  m.octet(1), m.octet(2), m.octet(1 /* little-endian */), m.octet(0 /* Request */);
  m.ulong(0);  // size, patched below
  m.ulong(request_id);
  m.octet(3);  // response expected
  m.octet(0), m.octet(0), m.octet(0);
  m.ushort(0);  // TargetAddress: KeyAddr
  m.octets(object_key);
  m.string("echoString");
  m.ulong(0);  // no service contexts
  m.align(8);  // GIOP 1.2: the body starts 8-aligned
  m.string(message);
  const uint32_t size = static_cast<uint32_t>(m.b.size() - kGiopHeader);
  std::memcpy(m.b.data() + 8, &size, 4);  // little-endian host (x86-64, aarch64)
  return m.b;
}

uint32_t read_ulong(const Bytes& b, size_t& at) {
  at = (at + 3) / 4 * 4;
  if (at + 4 > b.size()) return UINT32_MAX;
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  at += 4;
  return v;
}

// What is wrong with `reply` as the NO_EXCEPTION reply to `request_id`
// echoing `message`; "" if nothing.
std::string check_reply(const Bytes& reply, uint32_t request_id, const std::string& message) {
  if (reply.size() < kGiopHeader || std::memcmp(reply.data(), "GIOP", 4) != 0) return "not GIOP";
  if ((reply[6] & 1) == 0) return "a big-endian reply (a little-endian one expected)";
  if (reply[7] != 1) return "GIOP message type " + std::to_string(reply[7]) + ", not a Reply";
  size_t at = kGiopHeader;
  if (read_ulong(reply, at) != request_id) return "the reply of another request";
  if (const uint32_t status = read_ulong(reply, at); status != 0)
    return "reply status " + std::to_string(status);
  const uint32_t contexts = read_ulong(reply, at);
  for (uint32_t i = 0; i < contexts && at < reply.size(); ++i) {
    read_ulong(reply, at);  // context id
    at += read_ulong(reply, at);
  }
  if (at > reply.size()) return "truncated service contexts";
  at = (at + 7) / 8 * 8;
  const uint32_t len = read_ulong(reply, at);
  if (len == 0 || len == UINT32_MAX || at + len > reply.size()) return "truncated string";
  if (std::string(reinterpret_cast<const char*>(reply.data() + at), len - 1) != message)
    return "a wrong echo";
  return "";
}

// Reads one whole GIOP message.
bool recv_message(omni::giopConnection& c, Bytes& out) {
  const omni_time_t deadline = after_seconds(30);
  out.assign(kGiopHeader, 0);
  for (size_t got = 0; got < out.size();) {
    const int n = c.Recv(out.data() + got, out.size() - got, deadline);
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
    if (got == kGiopHeader && out.size() == kGiopHeader) {
      uint32_t size;
      std::memcpy(&size, out.data() + 8, 4);
      if (size > (1u << 20)) return false;
      out.resize(kGiopHeader + size);
    }
  }
  return true;
}

struct Target {
  std::string scheme, node;
  uint16_t port = 0;
  Bytes object_key;
};

// This process as node `name` of the target's transport: its NIC (held, as
// the ORB holds it) and the server's address. Null NIC if it cannot start.
std::shared_ptr<void> open_node(const Target& t, const std::string& name,
                                std::unique_ptr<omni::giopAddress>& address) {
  if (t.scheme == "giop:via") {
    address = std::make_unique<clanorb::ViaAddress>(t.node, t.port);
    return clanorb::ViaNic::get(name);
  }
  if (t.scheme == "giop:clan") address = std::make_unique<clanorb::ClanAddress>(t.node, t.port);
  else address = std::make_unique<clanorb::OtpAddress>(t.node, t.port);
  return clanorb::Fabric::get(t.scheme.c_str(), name);
}

// Lets go of the process's node (as when the last ORB is destroyed).
void close_node(const Target& t) {
  if (t.scheme == "giop:via") clanorb::ViaNic::release();
  else clanorb::Fabric::release();
}

// One echoString call, request id `n`, over `c`: what went wrong, or "".
std::string call(omni::giopConnection& c, const Target& t, const std::string& message, uint32_t n) {
  Bytes request = echo_request(n, t.object_key, message);
  Bytes reply;
  if (c.Send(request.data(), request.size(), after_seconds(30)) != static_cast<int>(request.size()))
    return "send failed";
  if (!recv_message(c, reply)) return "no reply";
  return check_reply(reply, n, message);
}

void close_connection(omni::giopActiveConnection* active) {
  omni::giopConnection& c = active->getConnection();
  c.Shutdown();
  c.decrRefCount(1);
}

// One client: its own node, one call, then everything of it let go of.
std::string one_client(const Target& t, const std::string& node_name, uint32_t n) {
  std::unique_ptr<omni::giopAddress> address;
  std::shared_ptr<void> nic = open_node(t, node_name, address);
  if (!nic) return "cannot open node " + node_name;
  CORBA::Boolean timed_out = 0;
  omni::giopActiveConnection* active = address->Connect(after_seconds(30), 0, timed_out);
  std::string problem;
  if (!active) {
    problem = timed_out ? "connect timed out" : "connect refused";
  } else {
    problem = call(active->getConnection(), t, node_name + "-hello", n);
    close_connection(active);
  }
  nic.reset();
  close_node(t);
  return problem;
}

// One client with `count` connections at once, each making a call: prints
// how many were refused, then holds the rest until stdin ends. Exit 0 unless
// a connect timed out or a call failed.
int hold_connections(const Target& t, unsigned long count) {
  std::unique_ptr<omni::giopAddress> address;
  const std::string name = "hold" + std::to_string(getpid());
  std::shared_ptr<void> nic = open_node(t, name, address);
  if (!nic) return 1;
  std::vector<omni::giopActiveConnection*> held;
  unsigned long refused = 0;
  int code = 0;
  for (unsigned long i = 0; i < count && code == 0; ++i) {
    CORBA::Boolean timed_out = 0;
    omni::giopActiveConnection* active = address->Connect(after_seconds(30), 0, timed_out);
    if (!active) {
      ++refused;
      if (timed_out) code = 1;
      continue;
    }
    held.push_back(active);
    const std::string problem = call(active->getConnection(), t, name + "-" + std::to_string(i), i);
    if (!problem.empty()) {
      std::cerr << "churn_client: connection " << i << ": " << problem << "\n";
      code = 1;
    }
  }
  std::cout << "connected " << held.size() << " refused " << refused << std::endl;
  for (std::string line; std::getline(std::cin, line);) {
  }
  for (auto* active : held) close_connection(active);
  nic.reset();
  close_node(t);
  return code;
}

bool parse_target(const std::string& address, const std::string& ior, Target& t) {
  const size_t scheme_end = address.find(':', 5);
  if (address.rfind("giop:", 0) != 0 || scheme_end == std::string::npos) return false;
  t.scheme = address.substr(0, scheme_end);
  if (t.scheme != "giop:clan" && t.scheme != "giop:otp" && t.scheme != "giop:via") return false;
  if (!clanorb::parse_node_address(address.c_str() + scheme_end + 1, t.node, t.port, false)) return false;
  std::vector<uint8_t> octets;
  clanorb::ior_tool::Ior decoded;
  std::string error;
  if (!clanorb::ior_tool::ior_octets(ior, octets, error) ||
      !clanorb::ior_tool::decode_ior(octets, decoded, error)) {
    std::cerr << "churn_client: --ior: " << error << "\n";
    return false;
  }
  for (const auto& p : decoded.profiles) {
    if (p.tag == clanorb::ior_tool::kTagInternetIop) t.object_key = p.object_key;
  }
  return !t.object_key.empty();
}

}  // namespace

int main(int argc, char** argv) {
  std::string address, ior;
  unsigned long clients = 0, first = 0, hold = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--address") address = argv[i + 1];
    else if (a == "--ior") ior = argv[i + 1];
    else if (a == "--clients") clients = std::stoul(argv[i + 1]);
    else if (a == "--first") first = std::stoul(argv[i + 1]);
    else if (a == "--hold") hold = std::stoul(argv[i + 1]);
    else return 2;
  }
  Target target;
  if (argc % 2 != 1 || !parse_target(address, ior, target)) {
    std::cerr << "usage: churn_client --address giop:<clan|otp|via>:NODE:PORT --ior IOR "
                 "(--clients N [--first K] | --hold N)\n";
    return 2;
  }
  if (hold > 0) return hold_connections(target, hold);
  const std::string prefix = "churn" + std::to_string(getpid()) + "x";
  for (unsigned long i = first; i < first + clients; ++i) {
    const std::string problem = one_client(target, prefix + std::to_string(i), static_cast<uint32_t>(i));
    if (!problem.empty()) {
      std::cerr << "churn_client: client " << i << " of " << address << ": " << problem << "\n";
      return 1;
    }
  }
  std::cout << "done " << clients << std::endl;
  return 0;
}
