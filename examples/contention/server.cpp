#include "contention/server.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "bench/session.hpp"
#include "clan_emul/event_queue.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/oob_manager.hpp"
#include "clan_emul/resident_set.hpp"
#include "contention/link.hpp"

namespace contention {
namespace {

using clan::Deadline;
using clan::Errc;
using std::chrono::milliseconds;
using std::chrono::seconds;

// How long a server waits for a request before it gives the client up.
constexpr seconds kIdleLimit{60};

struct Served {
  std::atomic<uint64_t> requests{0};
  std::atomic<int32_t> error{0};
};

void fail(Served& s, Errc e) {
  int32_t none = 0;
  s.error.compare_exchange_strong(none, static_cast<int32_t>(e));
}

// Answers the message just received; kClosed when the client is done.
Errc answer(Link& l, const unsigned char* reply) {
  if (Errc e = l.rx().release(); e != Errc::kOk) return e;
  return l.tx().send(reply, kReplyBytes, Deadline::after(kIdleLimit));
}

// MT and fixed: a thread per link, waiting on its own link.
void serve_one(Link& l, Served& s) {
  unsigned char reply[kReplyBytes] = {};
  for (;;) {
    auto m = l.rx().receive(Deadline::after(kIdleLimit));
    if (!m) {
      if (m.error() != Errc::kClosed) fail(s, m.error());
      break;
    }
    reply[0] = static_cast<unsigned char>(*m.value().data);
    if (Errc e = answer(l, reply); e != Errc::kOk) {
      fail(s, e);
      break;
    }
    s.requests.fetch_add(1, std::memory_order_relaxed);
  }
  l.close();
}

// Serves what is waiting on one link; false once it is closed (or broken).
bool drain(Link& l, Served& s) {
  unsigned char reply[kReplyBytes] = {};
  for (;;) {
    auto m = l.rx().try_receive();
    if (!m) {
      if (m.error() == clan::Errc::kTimeout || m.error() == Errc::kWouldBlock) return true;
      if (m.error() != Errc::kClosed) fail(s, m.error());
      return false;
    }
    reply[0] = static_cast<unsigned char>(*m.value().data);
    if (Errc e = answer(l, reply); e != Errc::kOk) {
      fail(s, e);
      return false;
    }
    s.requests.fetch_add(1, std::memory_order_relaxed);
  }
}

// OneVN and ST: one thread over every link, woken by the event queue;
// it processes a link's requests until none remain, and waits again. A
// quiet spell sweeps every link (events are hints).
void serve_all(std::vector<std::unique_ptr<Link>>& links, clan::EventQueue& q, Served& s) {
  std::vector<bool> open(links.size(), true);
  size_t left = links.size();
  auto visit = [&](size_t i) {
    if (i < links.size() && open[i] && !drain(*links[i], s)) open[i] = false, --left, links[i]->close();
  };
  auto give_up = std::chrono::steady_clock::now() + kIdleLimit;
  while (left > 0 && std::chrono::steady_clock::now() < give_up) {
    auto ev = q.wait(Deadline::after(milliseconds(20)));
    if (ev) {
      visit(ev.value().user);
      give_up = std::chrono::steady_clock::now() + kIdleLimit;
      continue;
    }
    for (size_t i = 0; i < links.size(); ++i) visit(i);
  }
  if (left > 0) fail(s, Errc::kTimeout);
}

struct Server {
  std::unique_ptr<clan::Nic> nic;
  std::unique_ptr<clan::OobManager> oob;
  clan::EventQueue events;
  clan::Endpoint shared;  // OneVN's one endpoint
  std::vector<std::unique_ptr<Link>> links;
};

// Accepts one DmqConnection per client from the listener.
Errc accept_all(Server& sv, const PointSpec& spec, clan::OobListener& listener) {
  const bool one_thread = spec.config != Config::kMt;
  for (uint32_t i = 0; i < spec.clients; ++i) {
    auto req = listener.next_request(Deadline::after(seconds(120)));
    if (!req) return req.error();
    auto c = clan::DmqConnection::accept(*sv.nic, *req, ring_config(), one_thread ? &sv.events : nullptr, i,
                                         spec.config == Config::kOneVn ? &sv.shared : nullptr);
    if (!c) return c.error();
    sv.links.push_back(std::make_unique<Link>(std::move(*c)));
  }
  return Errc::kOk;
}

// The fixed-resource build: bare queues, cookies relayed by the measurer.
Errc attach_all(Server& sv, const PointSpec& spec, bench::Channel& ctl) {
  for (uint32_t i = 0; i < spec.clients; ++i) {
    QueueCookies peer{};
    if (!ctl.get(peer, milliseconds(120000))) return Errc::kTimeout;
    auto q = make_bare(*sv.nic);
    if (!q) return q.error();
    if (!ctl.put(q->cookies())) return Errc::kClosed;
    auto l = attach_bare(std::move(*q), peer);
    if (!l) return l.error();
    sv.links.push_back(std::move(*l));
  }
  return Errc::kOk;
}

Errc set_up(Server& sv, const PointSpec& spec, bench::Channel& ctl) {
  clan::NicConfig nc = bench::nic_config(kServerNode, spec.spin_ns);
  nc.frames = spec.frames;
  nc.replacement = spec.replacement;
  auto nic = clan::Nic::open(nc);
  if (!nic) return nic.error();
  sv.nic = std::move(*nic);
  auto q = sv.nic->create_event_queue();
  if (!q) return q.error();
  sv.events = std::move(*q);
  if (spec.config == Config::kOneVn) {
    auto ep = sv.nic->create_endpoint();
    if (!ep) return ep.error();
    sv.shared = std::move(*ep);
  }
  if (spec.config == Config::kFixed) return ctl.put('r') ? attach_all(sv, spec, ctl) : Errc::kClosed;
  auto oob = clan::OobManager::start(oob_config(kServerNode));
  if (!oob) return oob.error();
  sv.oob = std::move(*oob);
  auto listener = sv.oob->listen(kPort);
  if (!listener) return listener.error();
  if (!ctl.put('r')) return Errc::kClosed;
  return accept_all(sv, spec, **listener);
}

void sleep_until_ns(uint64_t ns) {
  std::this_thread::sleep_until(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(ns)));
}

// The resident set's counters at the window's edges.
ServerReport sample_window(clan::Nic& nic, const Window& w) {
  sleep_until_ns(w.begin_ns);
  const clan::ResidentSetStats a = nic.resident_set_stats();
  sleep_until_ns(w.end_ns);
  const clan::ResidentSetStats b = nic.resident_set_stats();
  return ServerReport{0, b.remaps - a.remaps, b.evictions - a.evictions, 0};
}

}  // namespace

int run_server(const PointSpec& spec, bench::Channel ctl) {
  Server sv;
  if (Errc e = set_up(sv, spec, ctl); e != Errc::kOk) return 10 + static_cast<int>(e) % 50;
  Served served;
  std::vector<std::thread> threads;
  if (spec.config == Config::kMt || spec.config == Config::kFixed) {
    for (auto& l : sv.links) threads.emplace_back([&l, &served] { serve_one(*l, served); });
  } else {
    threads.emplace_back([&] { serve_all(sv.links, sv.events, served); });
  }
  Window w{};
  const bool ok = ctl.put('a') && ctl.get(w, milliseconds(120000));
  ServerReport r = ok ? sample_window(*sv.nic, w) : ServerReport{static_cast<int32_t>(Errc::kClosed), 0, 0, 0};
  for (auto& t : threads) t.join();
  r.requests = served.requests.load();
  if (r.status == 0) r.status = served.error.load();
  sv.links.clear();
  return ctl.put(r) && r.status == 0 ? 0 : 1;
}

}  // namespace contention
