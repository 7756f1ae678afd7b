// DatagramLinks over the udp channel for the tests: the configuration (the
// largest mtu one UDP datagram allows) and two ends in one process.
#pragma once

#include <chrono>
#include <memory>
#include <thread>

#include "clan_emul/datagram_link.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/oob_listener.hpp"
#include "clan_emul/oob_manager.hpp"
#include "peer_host.hpp"
#include "support/oob_runtime.hpp"

namespace clan::test {

inline DatagramLinkConfig udp_link_config(size_t window, uint64_t seed = 0, double drop = 0,
                                          double corrupt = 0) {
  DatagramLinkConfig c;
  c.channel = DatagramChannel::kUdp;
  c.udp_address = test_host();
  c.mtu = DatagramLink::kMaxUdpMtu;
  c.window = window;
  c.faults.seed = seed;
  c.faults.drop_rate = drop;
  c.faults.corrupt_rate = corrupt;
  return c;
}

// Two ends of a link in one process (one NIC, two OOB managers).
struct UdpLinkPair {
  RuntimeDir dir;
  std::unique_ptr<Nic> nic;
  std::unique_ptr<OobManager> mgr_a, mgr_b;
  std::unique_ptr<OobListener> listener;
  std::unique_ptr<DatagramLink> a, b;  // a connected, b accepted
  Errc connect_error = Errc::kOk, accept_error = Errc::kOk;

  UdpLinkPair(const DatagramLinkConfig& ca, const DatagramLinkConfig& cb, NicConfig nc = {}) {
    using namespace std::chrono_literals;
    nic = std::move(Nic::open(nc).value());
    mgr_a = std::move(OobManager::start(oob_config(dir, "a")).value());
    mgr_b = std::move(OobManager::start(oob_config(dir, "b")).value());
    listener = std::move(mgr_b->listen(7).value());
    std::thread t([&] {
      auto r = DatagramLink::connect(*nic, *mgr_a, "b", 7, ca, Deadline::after(20s));
      if (r) a = std::move(r.value()); else connect_error = r.error();
    });
    auto req = listener->next_request(Deadline::after(20s));
    if (req) {
      auto r = DatagramLink::accept(*nic, *req, cb);
      if (r) b = std::move(r.value()); else accept_error = r.error();
    } else {
      accept_error = req.error();
    }
    t.join();
  }
  bool ok() const { return a && b; }
};

}  // namespace clan::test
