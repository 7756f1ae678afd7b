#include "clan_emul/oob_config.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>

#include "clan_emul/decimal.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/oob_runtime_dir.hpp"
#include "clan_emul/oob_wire.hpp"

namespace clan::oob_detail {

namespace {

constexpr uint64_t kMaxPeerTimeoutMs = 24ull * 3600 * 1000;

// $CLAN_PEER_TIMEOUT_MS overrides the configured timeout; empty is unset.
Errc apply_peer_timeout_env(OobConfig& cfg) {
  const char* text = std::getenv("CLAN_PEER_TIMEOUT_MS");
  if (!text || !*text) return Errc::kOk;
  const ParsedValue v = parse_decimal(text);
  // Above the heartbeat interval: a peer must have the chance to be heard.
  const auto least = static_cast<uint64_t>(cfg.heartbeat_interval.count()) + 1;
  if (v.problem != ValueProblem::kNone || v.value < least || v.value > kMaxPeerTimeoutMs) {
    return set_error(Errc::kInvalidArgument, 0,
                     "CLAN_PEER_TIMEOUT_MS='%s' %s; it takes %llu to %llu milliseconds, in decimal digits",
                     text, v.problem != ValueProblem::kNone ? describe(v.problem) : "is out of range",
                     static_cast<unsigned long long>(least), static_cast<unsigned long long>(kMaxPeerTimeoutMs));
  }
  cfg.peer_timeout = std::chrono::milliseconds(v.value);
  return Errc::kOk;
}

// $CLAN_OOB_LISTEN, when the configuration names no address (checked at bind).
void apply_listen_env(OobConfig& cfg) {
  if (!cfg.listen.empty()) return;
  if (const char* text = std::getenv("CLAN_OOB_LISTEN")) cfg.listen = text;
}

Errc check_config(const OobConfig& cfg) {
  if (!oob_wire::valid_node_name(cfg.node)) {
    return set_error(Errc::kInvalidArgument, 0,
                     "'%s' is not a node name (1 to %zu characters of A-Z a-z 0-9 . _ -, not '.' or '..')",
                     cfg.node.c_str(), oob_wire::kMaxNodeName);
  }
  if (cfg.heartbeat_interval.count() <= 0 || cfg.peer_timeout <= cfg.heartbeat_interval) {
    return set_error(Errc::kInvalidArgument, 0,
                     "the heartbeat interval (%lld ms) must be positive and below the peer timeout (%lld ms)",
                     static_cast<long long>(cfg.heartbeat_interval.count()),
                     static_cast<long long>(cfg.peer_timeout.count()));
  }
  if (std::string sock = sock_path(cfg.runtime_dir, cfg.node); sock.size() > kSunPathMax) {
    return set_error(Errc::kInvalidArgument, 0,
                     "the socket path '%s' is %zu characters, above the %zu a unix socket allows "
                     "(choose a shorter runtime directory)",
                     sock.c_str(), sock.size(), kSunPathMax);
  }
  return Errc::kOk;
}

}  // namespace

Errc resolve_config(OobConfig& cfg) {
  bool must_own = false;
  if (cfg.runtime_dir.empty()) {
    cfg.runtime_dir = default_runtime_dir();
    must_own = true;
  }
  while (cfg.runtime_dir.size() > 1 && cfg.runtime_dir.back() == '/') cfg.runtime_dir.pop_back();
  if (Errc e = apply_peer_timeout_env(cfg); e != Errc::kOk) return e;
  apply_listen_env(cfg);
  if (Errc e = check_config(cfg); e != Errc::kOk) return e;
  return ensure_dir(cfg.runtime_dir, must_own);
}

}  // namespace clan::oob_detail
