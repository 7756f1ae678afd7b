#include "orb_transports/common/node_address.hpp"

#include <cstdlib>
#include <cstring>

namespace clanorb {

namespace {

// A node is an OOB node name ([A-Za-z0-9._-]{1,64}) and a NIC name, which
// the NIC's shared header holds in 64 bytes with its terminating zero.
constexpr size_t kMaxNode = 63;

bool node_char(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
         ch == '_' || ch == '-';
}

bool reach_char(char ch) { return node_char(ch) || ch == ':' || ch == '[' || ch == ']'; }

std::string name_problem(const std::string& node, bool allow_empty);

// Why `node` cannot be a node, "NAME" or "NAME@HOST:PORT" (a node of
// another host, which the connection manager checks in full), "" if it can.
std::string node_problem(const std::string& node, bool allow_empty, bool allow_remote) {
  const size_t at = node.find('@');
  if (at == std::string::npos) return name_problem(node, allow_empty);
  if (!allow_remote) return "a node of another host (NAME@HOST:PORT) is only for a transport that crosses hosts";
  if (std::string why = name_problem(node.substr(0, at), false); !why.empty()) return why;
  const std::string where = node.substr(at + 1);
  if (where.empty() || where.size() > 262) return "the host after '@' is empty or too long";
  for (char ch : where) {
    if (!reach_char(ch)) return std::string("character '") + ch + "' is not allowed in a host address";
  }
  return "";
}

// Why `node` cannot be a node name ("" if it can).
std::string name_problem(const std::string& node, bool allow_empty) {
  if (node.empty()) return allow_empty ? "" : "the node name is empty";
  for (char ch : node) {
    if (ch == ':') return "too many ':' (a node name has no ':')";
    if (!node_char(ch)) return std::string("character '") + ch + "' is not allowed in a node name (A-Z a-z 0-9 . _ -)";
  }
  if (node.size() > kMaxNode) {
    return "the node name is " + std::to_string(node.size()) + " characters, above " + std::to_string(kMaxNode);
  }
  if (node == "." || node == "..") return "'" + node + "' is not a node name";
  return "";
}

// Why `p` cannot be a port ("" if it can); sets `port`.
std::string port_problem(const std::string& p, bool allow_empty, uint16_t& port) {
  port = 0;
  if (p.empty()) return allow_empty ? "" : "the port is empty";
  if (p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) {
    return "port '" + p + "' is not a number from 1 to 65535";
  }
  const unsigned long v = std::strtoul(p.c_str(), nullptr, 10);
  if (v > 65535) return "port " + p + " is above 65535";
  if (v == 0 && !allow_empty) return "port 0 is not an address";
  port = static_cast<uint16_t>(v);
  return "";
}

}  // namespace

bool parse_node_address(const char* param, std::string& node, uint16_t& port, bool allow_empty,
                        std::string* reason, bool allow_remote) {
  std::string why;
  if (!param) {
    why = "no address";
  } else if (const char* colon = std::strrchr(param, ':'); !colon) {
    why = "missing ':' between node and port";
  } else {
    node.assign(param, colon);
    why = node_problem(node, allow_empty, allow_remote);
    if (why.empty()) why = port_problem(colon + 1, allow_empty, port);
  }
  if (reason) *reason = why;
  return why.empty();
}

void log_bad_node_address(int level, const char* what, const char* scheme, const char* param,
                          const std::string& reason, const char* syntax) {
  if (!omniORB::trace(static_cast<CORBA::ULong>(level))) return;
  omniORB::logger l;
  l << scheme << ": bad " << what << " '" << scheme << ":" << (param ? param : "") << "': " << reason.c_str()
    << "; expected " << scheme << ":" << syntax << "\n";
}

NodeAddress::NodeAddress(const char* scheme, std::string node, uint16_t port)
    : scheme_(scheme),
      node_(std::move(node)),
      port_(port),
      address_(std::string(scheme) + ":" + node_ + ":" + std::to_string(port)) {}

}  // namespace clanorb
