#include "contention/protocol.hpp"

namespace contention {

const char* to_string(Config c) {
  switch (c) {
    case Config::kOneVn: return "OneVN";
    case Config::kSt: return "ST";
    case Config::kMt: return "MT";
    case Config::kFixed: return "fixed";
  }
  return "?";
}

std::string client_node(uint32_t client) { return "contention-c" + std::to_string(client); }

clan::OobConfig oob_config(const std::string& node) {
  clan::OobConfig c;
  c.node = node;
  return c;
}

}  // namespace contention
