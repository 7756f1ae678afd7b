// A DMQ receiver whose sender's endpoint is on the host (paper 004 sect.
// 3.2): releasing a message does not wait for the sender's residency, and
// the read pointer it owes still reaches a sender waiting for space.
#include <catch2/catch.hpp>

#include <cstring>
#include <thread>
#include <vector>

#include "clan_emul/dmq_receiver.hpp"
#include "clan_emul/dmq_sender.hpp"
#include "clan_emul/endpoint.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/resident_set.hpp"

using namespace clan;
using namespace std::chrono_literals;

TEST_CASE("a DMQ release owes its read pointer to a sender on the host, paid before blocking",
          "[dmq][resident]") {
  // One frame, taken by an idle endpoint, and a re-mapping of a second: the
  // sender's endpoint stays on the host that long after it is asked for.
  NicConfig tx_config;
  tx_config.frames = 1;
  tx_config.remap_cost = 1s;
  auto tx_nic = std::move(Nic::open(tx_config).value());
  auto rx_nic = std::move(Nic::open({}).value());
  Endpoint idle = std::move(tx_nic->create_endpoint().value());
  Endpoint ep = std::move(tx_nic->create_endpoint().value());
  REQUIRE(ep.residency() == Residency::kOnHostReadOnly);
  DmqConfig cfg;
  cfg.ring_bytes = 4096;
  cfg.max_message = 1000;
  auto tx = std::move(DmqSender::create(*tx_nic, cfg, &ep).value());
  auto rx = std::move(DmqReceiver::create(*rx_nic, cfg).value());
  REQUIRE(tx->attach(rx->cookie()) == Errc::kOk);
  REQUIRE(rx->attach(tx->cookie()) == Errc::kOk);

  // Four messages of 1008 ring bytes fill the ring but for 64 bytes.
  constexpr int kMessages = 12;
  std::vector<char> msg(1000);
  auto fill = [&](int i) { std::memset(msg.data(), 'a' + i, msg.size()); };
  for (int i = 0; i < 4; ++i) {
    fill(i);
    REQUIRE(tx->send(msg.data(), msg.size(), Deadline::after(10s)) == Errc::kOk);
  }
  REQUIRE(tx->space() == 64);
  auto m = rx->receive(Deadline::after(10s));
  REQUIRE(m.ok());
  REQUIRE(rx->release() == Errc::kOk);
  // Not written yet: the sender's endpoint is still being made resident.
  CHECK(tx->space() == 64);

  // The sender blocks for space; the receiver drains what is there, then
  // pays the pointer it owes before it waits for more.
  std::atomic<int> send_failures{0};
  std::thread sender([&] {
    std::vector<char> out(1000);
    for (int i = 4; i < kMessages; ++i) {
      std::memset(out.data(), 'a' + i, out.size());
      if (tx->send(out.data(), out.size(), Deadline::after(30s)) != Errc::kOk) send_failures++;
    }
  });
  for (int i = 1; i < kMessages; ++i) {
    INFO("message " << i);
    auto r = rx->receive(Deadline::after(30s));
    REQUIRE(r.ok());
    REQUIRE(r->size == 1000);
    CHECK(static_cast<char>(r->data[0]) == 'a' + i);
    CHECK(static_cast<char>(r->data[999]) == 'a' + i);
    REQUIRE(rx->release() == Errc::kOk);
  }
  sender.join();
  CHECK(send_failures.load() == 0);
  CHECK(tx_nic->resident_set_stats().remaps >= 1);
}
