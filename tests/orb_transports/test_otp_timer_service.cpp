// giop:otp's timer service wakes its thread only for a time earlier than the
// one it sleeps until: during steady traffic every call moves a connection's
// timer later, and that must cost no wake-up; a time brought forward wakes
// it once, and the client runs once, on time or after.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>

#include "clan_emul/deadline.hpp"
#include "orb_transports/otp/otp_timer_service.hpp"
#include "orb_transports/plugin_pair.hpp"

using namespace clanorb;
using namespace std::chrono_literals;
using plugin_test::eventually;

namespace {

struct CountingClient : OtpTimerClient {
  std::atomic<int> runs{0};
  std::atomic<uint64_t> ran_at{0};
  void on_timer_due() override {
    ran_at = clan::now_ns();
    ++runs;
  }
};

}  // namespace

TEST_CASE("otp timer service: moving a wake-up later costs no wake-up, bringing it forward one",
          "[otp_timer]") {
  OtpTimerService& service = OtpTimerService::instance();
  CountingClient client;
  const uint64_t far = clan::now_ns() + 60'000'000'000ull;  // a minute on
  service.schedule(&client, far);
  // The thread now sleeps until then (or until something earlier another
  // test left, which this process does not have).
  REQUIRE(eventually([&] { return service.sleeping_until() == far; }));
  const uint64_t before = service.notifications();
  for (uint64_t k = 1; k <= 1000; ++k) service.schedule(&client, far + k * 1000);
  CHECK(service.notifications() == before);
  CHECK(client.runs == 0);

  const uint64_t soon = clan::now_ns() + 1'000'000;  // 1 ms on
  service.schedule(&client, soon);
  CHECK(service.notifications() == before + 1);
  REQUIRE(eventually([&] { return client.runs.load() == 1; }));
  CHECK(client.ran_at >= soon);
  // Run once: nothing is scheduled for it any more.
  CHECK_FALSE(eventually([&] { return client.runs.load() > 1; }, 20ms));
  service.forget(&client);
}

TEST_CASE("otp timer service: a client forgotten before its time never runs", "[otp_timer]") {
  OtpTimerService& service = OtpTimerService::instance();
  CountingClient client;
  service.schedule(&client, clan::now_ns() + 200'000'000);  // 200 ms on
  service.forget(&client);
  CHECK_FALSE(eventually([&] { return client.runs.load() > 0; }, 400ms));
}
