// What a server endpoint keeps per client and how it reports refusals,
// without an ORB: the per-client connection cap (ClientSlots) and the rate
// limit on refusal log lines (LogLimiter), with time passed in.
#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <vector>

#include "orb_transports/common/client_slots.hpp"
#include "orb_transports/common/log_limiter.hpp"

using clanorb::ClientSlots;
using clanorb::LogLimiter;
using namespace std::chrono_literals;

TEST_CASE("a client at its cap is refused while another client is not", "[plugin][admission]") {
  auto slots = ClientSlots::create(2);
  std::vector<ClientSlots::Slot> a;
  for (int i = 0; i < 2; ++i) {
    auto s = slots->take("a");
    REQUIRE(s);
    a.push_back(std::move(*s));
  }
  CHECK_FALSE(slots->take("a"));
  auto b = slots->take("b");
  CHECK(b);
  a.pop_back();  // a connection of a's closes: a may have one more
  CHECK(slots->take("a"));
}

TEST_CASE("a client's entry goes with its last connection", "[plugin][admission]") {
  auto slots = ClientSlots::create(2);
  {
    auto s1 = slots->take("a");
    auto s2 = slots->take("b");
    REQUIRE((s1 && s2));
    CHECK(slots->clients() == 2);
    ClientSlots::Slot moved = std::move(*s1);  // a moved-from slot gives nothing back
    s1.reset();
    CHECK(slots->clients() == 2);
  }
  CHECK(slots->clients() == 0);
  CHECK(slots->take("c").has_value());  // taken and given back at once
  CHECK(slots->clients() == 0);
}

TEST_CASE("a cap of 0 refuses no client", "[plugin][admission]") {
  auto slots = ClientSlots::create(0);
  std::vector<ClientSlots::Slot> held;
  for (int i = 0; i < 1000; ++i) {
    auto s = slots->take("a");
    REQUIRE(s);
    held.push_back(std::move(*s));
  }
  CHECK(slots->clients() == 1);
}

TEST_CASE("refusal lines are let through once a second, with the count held back", "[plugin][admission]") {
  LogLimiter limiter(1s);
  const clan::Clock::time_point t0{std::chrono::seconds(100)};
  CHECK(limiter.admit(t0) == 0u);  // the first one at once
  for (int i = 1; i <= 50; ++i) CHECK_FALSE(limiter.admit(t0 + i * 10ms));
  CHECK(limiter.admit(t0 + 1s) == 50u);
  CHECK_FALSE(limiter.admit(t0 + 1500ms));
  CHECK(limiter.admit(t0 + 5s) == 1u);
  CHECK(limiter.admit(t0 + 7s) == 0u);  // a lone one after a quiet spell
}
