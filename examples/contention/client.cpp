#include "contention/client.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "bench/session.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/oob_manager.hpp"
#include "contention/link.hpp"

namespace contention {
namespace {

using clan::Deadline;
using clan::Errc;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr seconds kReplyLimit{60};

clan::Result<std::unique_ptr<Link>> connect_dmq(clan::Nic& nic, std::unique_ptr<clan::OobManager>& oob,
                                                uint32_t client) {
  auto m = clan::OobManager::start(oob_config(client_node(client)));
  if (!m) return m.error();
  oob = std::move(*m);
  auto c = clan::DmqConnection::connect(nic, *oob, kServerNode, kPort, ring_config(), Deadline::after(seconds(120)));
  if (!c) return c.error();
  return std::make_unique<Link>(std::move(*c));
}

// The fixed-resource build: cookies through the measuring process.
clan::Result<std::unique_ptr<Link>> connect_bare(clan::Nic& nic, bench::Channel& ctl) {
  auto q = make_bare(nic);
  if (!q) return q.error();
  QueueCookies peer{};
  if (!ctl.put(q->cookies()) || !ctl.get(peer, milliseconds(120000))) return Errc::kClosed;
  return attach_bare(std::move(*q), peer);
}

// One request and its reply.
Errc round_trip(Link& l, const std::vector<unsigned char>& request) {
  if (Errc e = l.tx().send(request.data(), request.size(), Deadline::after(kReplyLimit)); e != Errc::kOk) return e;
  auto m = l.rx().receive(Deadline::after(kReplyLimit));
  if (!m) return m.error();
  return l.rx().release();
}

ClientReport stream(Link& l, const PointSpec& spec, const Window& w) {
  std::vector<unsigned char> request(spec.size, 0x5a);
  ClientReport r{0, 0, 0};
  uint64_t sent = clan::now_ns();
  for (uint64_t n = 0;; ++n) {
    request[0] = static_cast<unsigned char>(n);
    if (Errc e = round_trip(l, request); e != Errc::kOk) {
      r.status = static_cast<int32_t>(e);
      break;
    }
    const uint64_t now = clan::now_ns();
    if (now >= w.end_ns) break;
    if (now >= w.begin_ns) {
      ++r.replies;
      r.max_round_trip_ns = std::max(r.max_round_trip_ns, now - sent);
    }
    sent = now;
  }
  l.close();
  return r;
}

}  // namespace

int run_client(const PointSpec& spec, uint32_t client, bench::Channel ctl) {
  auto nic = clan::Nic::open(bench::nic_config(client_node(client), spec.spin_ns));
  if (!nic) return 10;
  std::unique_ptr<clan::OobManager> oob;
  auto link = spec.config == Config::kFixed ? connect_bare(**nic, ctl) : connect_dmq(**nic, oob, client);
  if (!link) return 11;
  Window w{};
  if (!ctl.put('c') || !ctl.get(w, milliseconds(300000))) return 12;
  const ClientReport r = stream(**link, spec, w);
  // The connection stays until the server has seen every close: a client
  // that exits first is a dead peer to it, not a finished one.
  char quit = 0;
  const bool told = ctl.put(r) && ctl.get(quit, milliseconds(300000));
  link.value().reset();
  return told && r.status == 0 ? 0 : 1;
}

}  // namespace contention
