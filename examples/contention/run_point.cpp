#include "contention/run_point.hpp"

#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "bench/channel.hpp"
#include "bench/peer.hpp"
#include "bench/stats.hpp"
#include "clan_emul/deadline.hpp"
#include "contention/client.hpp"
#include "contention/server.hpp"

namespace contention {
namespace {

using std::chrono::milliseconds;

struct Proc {
  pid_t pid = -1;
  bench::Channel ctl;
};

// Forks `body` with its end of a fresh control channel.
Proc spawn(const std::function<int(bench::Channel)>& body) {
  Proc p;
  bench::Channel theirs;
  if (!bench::Channel::make_pair(p.ctl, theirs)) return p;
  std::fflush(nullptr);
  p.pid = bench::spawn_peer([&] {
    p.ctl.reset();
    return body(std::move(theirs));
  });
  return p;
}

struct Procs {
  Proc server;
  std::vector<Proc> clients;
  ~Procs() {
    for (Proc& c : clients) c.ctl.reset();  // a client waiting to quit sees the end
    for (Proc& c : clients) bench::reap_peer(c.pid, milliseconds(5000));
    bench::reap_peer(server.pid, milliseconds(5000));
  }
};

// Starts the clients; each is connected (and, in the fixed build, has its
// cookies relayed) before the next starts, so the server accepts in order.
bool connect_clients(Procs& ps, const PointSpec& spec, std::string& err) {
  for (uint32_t i = 0; i < spec.clients; ++i) {
    ps.clients.push_back(spawn([spec, i](bench::Channel ch) { return run_client(spec, i, std::move(ch)); }));
    Proc& c = ps.clients.back();
    if (c.pid < 0) return err = "fork failed", false;
    if (spec.config == Config::kFixed) {
      QueueCookies a{}, b{};
      if (!c.ctl.get(a, milliseconds(60000)) || !ps.server.ctl.put(a) || !ps.server.ctl.get(b, milliseconds(60000)) ||
          !c.ctl.put(b))
        return err = "cookie relay failed for client " + std::to_string(i), false;
    }
    char token = 0;
    if (!c.ctl.get(token, milliseconds(120000))) return err = "client " + std::to_string(i) + " did not connect", false;
  }
  char token = 0;
  if (!ps.server.ctl.get(token, milliseconds(120000))) return err = "the server did not accept every client", false;
  return true;
}

bool gather(Procs& ps, PointResult& r) {
  for (size_t i = 0; i < ps.clients.size(); ++i) {
    ClientReport c{};
    if (!ps.clients[i].ctl.get(c, milliseconds(120000)) || c.status != 0)
      return r.error = "client " + std::to_string(i) + " failed (status " + std::to_string(c.status) + ")", false;
    r.replies.push_back(c.replies);
    r.max_round_trip_ns = std::max(r.max_round_trip_ns, c.max_round_trip_ns);
  }
  ServerReport s{};
  if (!ps.server.ctl.get(s, milliseconds(120000)) || s.status != 0)
    return r.error = "the server failed (status " + std::to_string(s.status) + ")", false;
  r.remaps = s.remaps;
  r.evictions = s.evictions;
  for (Proc& c : ps.clients) c.ctl.put('q');
  return true;
}

}  // namespace

double PointResult::aggregate() const {
  double sum = 0;
  for (size_t i = 0; i < replies.size(); ++i) sum += client_rate(i);
  return sum;
}

double PointResult::min_rate() const {
  return replies.empty() ? 0 : static_cast<double>(*std::min_element(replies.begin(), replies.end())) / seconds;
}

double PointResult::max_rate() const {
  return replies.empty() ? 0 : static_cast<double>(*std::max_element(replies.begin(), replies.end())) / seconds;
}

double PointResult::median_rate() const {
  std::vector<double> v;
  for (size_t i = 0; i < replies.size(); ++i) v.push_back(client_rate(i));
  return v.empty() ? 0 : bench::median(v);
}

PointResult run_point(const PointSpec& spec, const Timing& t) {
  PointResult r;
  r.spec = spec;
  Procs ps;
  ps.server = spawn([spec](bench::Channel ch) { return run_server(spec, std::move(ch)); });
  char token = 0;
  if (ps.server.pid < 0 || !ps.server.ctl.get(token, milliseconds(60000))) {
    r.error = "the server did not start";
    return r;
  }
  if (!connect_clients(ps, spec, r.error)) return r;
  const uint64_t start = clan::now_ns() + 20'000'000;
  const Window w{start + static_cast<uint64_t>(t.warm_ms) * 1'000'000,
                 start + static_cast<uint64_t>(t.warm_ms + t.measure_ms) * 1'000'000};
  bool sent = ps.server.ctl.put(w);
  for (Proc& c : ps.clients) sent = c.ctl.put(w) && sent;
  if (!sent) r.error = "cannot start the window";
  r.seconds = static_cast<double>(w.end_ns - w.begin_ns) / 1e9;
  if (sent) gather(ps, r);
  return r;
}

PointResult median_repetition(std::vector<PointResult> reps) {
  std::vector<double> aggs;
  for (const PointResult& r : reps) {
    if (!r.error.empty()) return r;
    aggs.push_back(r.aggregate());
  }
  std::sort(reps.begin(), reps.end(), [](const PointResult& a, const PointResult& b) {
    return a.aggregate() < b.aggregate();
  });
  PointResult m = std::move(reps[reps.size() / 2]);
  m.aggregates = std::move(aggs);
  return m;
}

}  // namespace contention
