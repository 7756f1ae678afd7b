// Nodes of other hosts: the tcp ROUTER a node listens on, and how the death
// of a peer reached over tcp is seen without its pid.
//
// Silence cannot tell a stopped peer from a dead one, so it takes
// peer_timeout. A dead process leaves better evidence: the kernel closes its
// sockets, so our DEALER's connection to it drops (ZMQ_EVENT_DISCONNECTED),
// and its host then refuses a connect to its address (a reset: nothing
// listens there). Each drop or failed reconnect (ZMQ_EVENT_CONNECT_RETRIED)
// of a peer we hold something with starts one non-blocking connect to its
// address (TcpProbe); only ECONNREFUSED counts. A stopped process keeps its
// connections and its listening socket, a host that is down or cut off
// answers nothing, and a connect that completes proves a listener: none of
// them is evidence, and silence decides. So a peer of another host whose
// process dies is declared dead within 500 ms while its host is up: the drop
// is seen at once and probed then; should the probe still find the dying
// process's listener, ZeroMQ's reconnect, refused within its interval (20 ms,
// backing off to at most 500 ms), probes again.
#include <zmq.h>

#include <string>

#include "clan_emul/error_detail.hpp"
#include "clan_emul/oob_core.hpp"

namespace clan::oob_detail {

namespace {

constexpr auto kProbeTimeout = std::chrono::seconds(1);  // no answer by then: no evidence
constexpr int kWatchedEvents = ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_CONNECT_RETRIED;

Errc describe_bind_failure(const zmq::error_t& ex, const std::string& text, const std::string& endpoint) {
  const char* t = text.c_str();
  const char* ep = endpoint.c_str();
  switch (ex.num()) {
    case EADDRINUSE:
      return set_error(Errc::kAddressInUse, 0, "cannot listen on '%s' (%s): the address is in use", t, ep);
    case EADDRNOTAVAIL:
    case ENODEV:
    case EINVAL:
      return set_error(Errc::kInvalidArgument, 0, "cannot listen on '%s' (%s): not an address of this host", t,
                       ep);
    default:
      return set_error(Errc::kSystem, 0, "cannot listen on '%s' (%s): ZeroMQ: %s (errno %d)", t, ep, ex.what(),
                       ex.num());
  }
}

}  // namespace

// Binds tcp://host:port when the configuration names an address, and notes
// the port bound (port 0 picks a free one).
Errc Core::bind_tcp_router() {
  if (cfg_.listen.empty()) return Errc::kOk;
  std::string host;
  uint16_t port = 0;
  if (Errc e = parse_listen_address(cfg_.listen, host, port); e != Errc::kOk) {
    return append_error_context(e, "node '%s' cannot listen on tcp", cfg_.node.c_str());
  }
  const std::string endpoint = "tcp://" + host + ":" + std::to_string(port);
  try {
    tcp_router_.emplace(*ctx_, zmq::socket_type::router);
    set_router_options(*tcp_router_);
    if (host.front() == '[') tcp_router_->set(zmq::sockopt::ipv6, 1);
    tcp_router_->bind(endpoint);
    const std::string bound = tcp_router_->get(zmq::sockopt::last_endpoint);  // tcp://host:port
    listen_address_ = bound.substr(bound.find("//") + 2);
    listen_port_ = static_cast<uint16_t>(std::stoul(bound.substr(bound.rfind(':') + 1)));
  } catch (const zmq::error_t& ex) {
    tcp_router_.reset();
    return describe_bind_failure(ex, cfg_.listen, endpoint);
  }
  return Errc::kOk;
}

// Reports the connection events of `dealer` to node `n` on an inproc PAIR
// polled with the rest. Throws zmq::error_t.
void Core::watch_connection_mt(PeerNode& n, zmq::socket_t& dealer) {
  const std::string ep = "inproc://clan-oob-monitor-" + std::to_string(next_monitor_++);
  if (zmq_socket_monitor(dealer.handle(), ep.c_str(), kWatchedEvents) != 0) throw zmq::error_t();
  auto mon = std::make_unique<zmq::socket_t>(*ctx_, zmq::socket_type::pair);
  mon->set(zmq::sockopt::linger, 0);
  mon->connect(ep);
  n.monitor = std::move(mon);
}

void Core::on_monitor_mt(PeerNode& n) {
  bool dropped = false;
  try {
    for (;;) {
      zmq::message_t event;
      if (!n.monitor->recv(event, zmq::recv_flags::dontwait)) break;
      if (event.size() >= 2) {
        uint16_t what = static_cast<uint16_t>(event.data<uint8_t>()[0] | event.data<uint8_t>()[1] << 8);
        dropped = dropped || (what & kWatchedEvents) != 0;
      }
      while (event.more()) {  // the endpoint's frame
        if (!n.monitor->recv(event, zmq::recv_flags::dontwait)) break;
      }
    }
  } catch (const zmq::error_t&) {
  }
  const bool holds_something = !n.conns.empty() || n.pending_connects != 0;
  if (!dropped || n.probe || !holds_something) return;
  n.probe = std::make_unique<TcpProbe>(n.addr.host, n.addr.port, Clock::now() + kProbeTimeout);
  on_probe_mt(n, Clock::now());  // a refusal over loopback is known at once
}

void Core::on_probe_mt(PeerNode& n, Clock::time_point now) {
  const TcpProbe::Outcome o = n.probe->check(now);
  if (o == TcpProbe::Outcome::kPending) return;
  n.probe.reset();
  if (o == TcpProbe::Outcome::kRefused) nothing_listens_mt(n);
}

// Node `n`'s host answers, but nothing listens at its address: the process
// we knew there is gone, and so is any hope for a connect to it.
void Core::nothing_listens_mt(PeerNode& n) {
  fail_pending_mt(n.key, Errc::kRefused, "nothing listens at " + n.addr.host_port());
  if (n.alive && n.instance != 0) node_died_mt(n);
}

}  // namespace clan::oob_detail
