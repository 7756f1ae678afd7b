#include "clan_emul/oob_identity.hpp"

#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <random>
#include <span>

#include "clan_emul/deadline.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/host_identity.hpp"

namespace clan::oob_detail {

namespace {

bool boot_id_known(const oob_wire::BootId& b) {
  return std::any_of(b.begin(), b.end(), [](uint8_t x) { return x != 0; });
}

uint64_t random_instance() {
  std::random_device rd;
  uint64_t v = 0;
  while (v == 0) {
    v = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ now_ns() ^ static_cast<uint64_t>(::getpid());
  }
  return v;
}

Errc random_secret(SipKey& key) {
  if (::getrandom(key.data(), key.size(), 0) != static_cast<ssize_t>(key.size())) {
    return set_error(Errc::kSystem, errno, "cannot draw the node's secret: getrandom");
  }
  return Errc::kOk;
}

}  // namespace

Result<NodeIdentity> NodeIdentity::create(std::string node) {
  NodeIdentity id;
  id.node_ = std::move(node);
  id.pid_ = ::getpid();
  id.instance_ = random_instance();
  if (Errc e = random_secret(id.secret_); e != Errc::kOk) return e;
  id.boot_id_ = read_boot_id();
  id.pid_ns_ = read_pid_ns();
  return id;
}

oob_wire::Token NodeIdentity::token_for(const std::string& peer) const {
  oob_wire::Token t{};
  for (uint8_t half = 0; half < 2; ++half) {
    std::string msg = static_cast<char>(half) + peer;
    uint64_t v = siphash24(secret_, std::as_bytes(std::span(msg)));
    for (int i = 0; i < 8; ++i) t[8 * half + i] = static_cast<uint8_t>(v >> (8 * i));
  }
  return t;
}

void NodeIdentity::stamp(oob_wire::Header& h, const oob_wire::Token& token) const {
  h.node = node_;
  h.instance = instance_;
  h.pid = pid_;
  h.boot_id = boot_id_;
  h.pid_ns = pid_ns_;
  h.token = token;
}

bool NodeIdentity::same_host(const oob_wire::Header& h) const {
  return boot_id_known(boot_id_) && h.boot_id == boot_id_;
}

bool NodeIdentity::same_pid_namespace(const oob_wire::Header& h) const {
  return pid_ns_ != 0 && h.pid_ns == pid_ns_;
}

}  // namespace clan::oob_detail
