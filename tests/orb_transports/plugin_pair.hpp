// A plugin endpoint with its monitor running on a thread, and a connected
// client/server pair over it, driven the way omniORB's server core drives
// them (no ORB_init). Shared by the per-transport plugin tests.
#pragma once

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "orb_transports/common/node_address.hpp"

namespace plugin_test {

using namespace std::chrono_literals;

inline omni_time_t after(std::chrono::milliseconds d) {
  omni_time_t t;
  omni_thread::get_time(t, omni_time_t(d.count() / 1000, (d.count() % 1000) * 1000000));
  return t;
}

template <class Pred>
bool eventually(Pred p, std::chrono::milliseconds limit = 10s) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (!p()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::yield();
  }
  return true;
}

// An endpoint with its monitor running on a thread, recording what it does.
template <class Endpoint>
struct Server {
  Endpoint* ep = new Endpoint("", 0);
  std::thread monitor;
  std::mutex mu;
  std::deque<omni::giopConnection*> accepted;
  std::atomic<int> notified{0};
  std::atomic<omni::giopConnection*> last{nullptr};
  std::atomic<bool> monitor_returned{false};

  static void on_readable(void* self, omni::giopConnection* c) {
    auto* s = static_cast<Server*>(self);
    s->last = c;
    s->notified.fetch_add(1);
  }
  Server() {
    REQUIRE(ep->Bind());
    monitor = std::thread([this] {
      while (omni::giopConnection* c = ep->AcceptAndMonitor(&Server::on_readable, this)) {
        std::lock_guard lock(mu);
        accepted.push_back(c);
      }
      monitor_returned = true;
    });
  }
  omni::giopConnection* next_accepted() {
    omni::giopConnection* c = nullptr;
    eventually([&] {
      std::lock_guard lock(mu);
      if (accepted.empty()) return false;
      c = accepted.front();
      accepted.pop_front();
      return true;
    });
    return c;
  }
  ~Server() {
    ep->Poke();
    monitor.join();
    ep->Shutdown();
  }
};

// A client connected to a Server; `conn` is the server's side.
template <class Endpoint, class Address>
struct Pair {
  Server<Endpoint> server;
  omni::giopActiveConnection* client_active = nullptr;
  omni::giopConnection* client = nullptr;
  omni::giopConnection* conn = nullptr;
  Pair() {
    // "giop:<transport>:<node>:<port>": the node address follows the second ':'.
    const char* a = server.ep->address();
    const char* rest = std::strchr(std::strchr(a, ':') + 1, ':') + 1;
    std::string node;
    uint16_t port = 0;
    REQUIRE(clanorb::parse_node_address(rest, node, port, false));
    Address addr(node, port);
    CORBA::Boolean timed_out = 0;
    client_active = addr.Connect(after(10s), 0, timed_out);
    REQUIRE(client_active != nullptr);
    client = &client_active->getConnection();
    conn = server.next_accepted();
    REQUIRE(conn != nullptr);
  }
  ~Pair() {
    conn->Shutdown();
    conn->decrRefCount(1);
    client->Shutdown();
    client->decrRefCount(1);
  }
  void send(const char* s) { REQUIRE(client->Send((void*)s, strlen(s), after(5s)) == (int)strlen(s)); }
};

}  // namespace plugin_test
