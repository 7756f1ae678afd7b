// The DMA engine: requests complete in submission order, completion is an
// event, and a request whose cookie went bad writes nothing.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "clan_emul/aperture.hpp"
#include "clan_emul/dma_engine.hpp"
#include "clan_emul/dma_stream.hpp"
#include "clan_emul/event_queue.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/region.hpp"

using namespace clan;
using namespace std::chrono_literals;

namespace {
uint64_t load(const Region& r, size_t off) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(r.data() + off))
      .load(std::memory_order_acquire);
}
}  // namespace

TEST_CASE("DMA requests land in submission order", "[dma]") {
  auto owner = std::move(Nic::open({}).value());
  auto writer = std::move(Nic::open({}).value());
  const size_t kData = 64 * 1024;
  auto region = std::move(owner->export_region(kData + 64).value());
  auto ap = std::move(writer->import(region.cookie()).value());
  DmaStream dma(*writer);
  std::vector<std::vector<uint64_t>> payloads(64, std::vector<uint64_t>(kData / 8));
  // An observer checks that whenever the flag says round r, the data of round r is there.
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> violations{0}, observed{0};
  std::thread observer([&] {
    while (!stop.load()) {
      uint64_t r = load(region, kData);
      if (r == 0) continue;
      ++observed;
      // Data of round r has value r everywhere, or a later round's.
      if (load(region, 0) < r || load(region, kData - 8) < r) ++violations;
    }
  });
  uint64_t last = 0;
  for (uint64_t round = 1; round <= 64; ++round) {
    auto& p = payloads[round - 1];
    std::fill(p.begin(), p.end(), round);
    for (;;) {
      auto t = dma.write(ap, 0, p.data(), kData);
      if (t.ok()) break;
      REQUIRE(t.error() == Errc::kWouldBlock);
      dma.wait(dma.completed() + 1, Deadline::after(10s));
    }
    auto t = dma.write_word(ap, kData, round);
    REQUIRE(t.ok());
    last = t.value();
  }
  REQUIRE(dma.wait(last, Deadline::after(20s)) == Errc::kOk);
  stop = true;
  observer.join();
  CHECK(violations == 0);
  CHECK(load(region, kData) == 64);
  CHECK(load(region, 0) == 64);
  CHECK(dma.completed() == dma.submitted());
  CHECK(dma.error() == Errc::kOk);
}

TEST_CASE("DMA completion is posted to an event queue", "[dma][event_queue]") {
  auto owner = std::move(Nic::open({}).value());
  auto writer = std::move(Nic::open({}).value());
  auto region = std::move(owner->export_region(4096).value());
  auto ap = std::move(writer->import(region.cookie()).value());
  auto q = std::move(writer->create_event_queue().value());
  DmaStream dma(*writer, &q, 99);
  auto t = dma.write_word(ap, 0, 5);
  REQUIRE(t.ok());
  auto e = q.wait(Deadline::after(10s));
  REQUIRE(e.ok());
  CHECK(e->user == 99);
  CHECK(dma.done(t.value()));
  CHECK(load(region, 0) == 5);
}

TEST_CASE("a DMA request whose cookie was revoked writes nothing and reports it", "[dma][cookie]") {
  auto owner = std::move(Nic::open({}).value());
  auto writer = std::move(Nic::open({}).value());
  auto region = std::move(owner->export_region(4096).value());
  auto ap = std::move(writer->import(region.cookie()).value());
  DmaStream dma(*writer);
  region.revoke();
  auto t = dma.write_word(ap, 0, 5);
  REQUIRE(t.ok());  // queued: the check happens when the engine performs it
  REQUIRE(dma.wait(t.value(), Deadline::after(10s)) == Errc::kOk);
  CHECK(dma.error() == Errc::kRevokedCookie);
  CHECK(load(region, 0) == 0);
}

TEST_CASE("DMA requests outside the aperture are refused at submission", "[dma]") {
  auto owner = std::move(Nic::open({}).value());
  auto writer = std::move(Nic::open({}).value());
  auto region = std::move(owner->export_region(4096).value());
  auto ap = std::move(writer->import(region.cookie()).value());
  DmaStream dma(*writer);
  char b[16] = {};
  CHECK(dma.write(ap, 4090, b, 16).error() == Errc::kOutOfRange);
  CHECK(dma.write_word(ap, 4, 1).error() == Errc::kInvalidArgument);
  CHECK(dma.submitted() == 0);
}

TEST_CASE("a full DMA queue says so instead of growing", "[dma][resources]") {
  NicConfig c;
  c.dma_queue_depth = 2;
  c.dma_inline_when_idle = false;  // a submitter that performs its own never fills the queue
  auto owner = std::move(Nic::open({}).value());
  auto writer = std::move(Nic::open(c).value());
  auto region = std::move(owner->export_region(1 << 20).value());
  auto ap = std::move(writer->import(region.cookie()).value());
  DmaStream dma(*writer);
  std::vector<char> big(1 << 20, 'x');
  // 1 MiB copies keep the engine busy long enough for the queue to fill.
  int refused = 0;
  for (int i = 0; i < 64 && refused == 0; ++i) {
    auto t = dma.write(ap, 0, big.data(), big.size());
    if (!t) {
      CHECK(t.error() == Errc::kWouldBlock);
      ++refused;
    }
  }
  CHECK(refused == 1);
  CHECK(dma.wait(dma.submitted(), Deadline::after(20s)) == Errc::kOk);
}

TEST_CASE("while the DMA engine sleeps, submitters perform their requests themselves, in order",
          "[dma]") {
  NicConfig c;
  c.spin_budget = std::chrono::nanoseconds(0);  // the engine's thread sleeps as soon as it is idle
  auto owner = std::move(Nic::open({}).value());
  auto writer = std::move(Nic::open(c).value());
  const size_t kData = 4096;
  auto region = std::move(owner->export_region(2 * (kData + 64)).value());
  auto ap = std::move(writer->import(region.cookie()).value());

  // Once the engine's thread has gone to sleep, a request is done when
  // submit returns: the submitter performed it.
  DmaStream first(*writer);
  bool inline_seen = false;
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (!inline_seen && std::chrono::steady_clock::now() < until) {
    const uint64_t before = writer->dma().performed_inline();
    auto t = first.write_word(ap, 0, 1);
    REQUIRE(t.ok());
    if (writer->dma().performed_inline() > before) {
      inline_seen = true;
      CHECK(first.done(t.value()));
    }
    REQUIRE(first.wait(t.value(), Deadline::after(10s)) == Errc::kOk);
  }
  REQUIRE(inline_seen);

  // Two threads, one stream each, data then a flag: whichever thread holds
  // the performer token performs the other's requests too, still in order.
  constexpr uint64_t kRounds = 2000;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> violations{0};
  std::thread observer([&] {
    while (!stop.load()) {
      for (size_t side = 0; side < 2; ++side) {
        const size_t base = side * (kData + 64);
        const uint64_t r = load(region, base + kData);
        if (r != 0 && (load(region, base) < r || load(region, base + kData - 8) < r)) ++violations;
      }
    }
  });
  auto submitter = [&](size_t side, DmaStream& dma, Errc& result) {
    const size_t base = side * (kData + 64);
    std::vector<std::vector<uint64_t>> payload(4, std::vector<uint64_t>(kData / 8));
    result = Errc::kOk;
    for (uint64_t round = 1; round <= kRounds; ++round) {
      auto& p = payload[round % 4];
      // The buffer of round-4 may still be read: wait for it first.
      if (round > 4 && dma.wait(dma.submitted() >= 8 ? dma.submitted() - 6 : 0,
                                Deadline::after(10s)) != Errc::kOk) {
        result = Errc::kTimeout;
        return;
      }
      std::fill(p.begin(), p.end(), round);
      for (auto t = dma.write(ap, base, p.data(), kData); !t; t = dma.write(ap, base, p.data(), kData)) {
        if (t.error() != Errc::kWouldBlock || dma.wait(dma.completed() + 1, Deadline::after(10s)) != Errc::kOk) {
          result = t.error();
          return;
        }
      }
      for (auto t = dma.write_word(ap, base + kData, round); !t; t = dma.write_word(ap, base + kData, round)) {
        if (t.error() != Errc::kWouldBlock || dma.wait(dma.completed() + 1, Deadline::after(10s)) != Errc::kOk) {
          result = t.error();
          return;
        }
      }
    }
    if (dma.wait(dma.submitted(), Deadline::after(10s)) != Errc::kOk) result = Errc::kTimeout;
  };
  DmaStream a(*writer), b(*writer);
  Errc ra = Errc::kOk, rb = Errc::kOk;
  std::thread ta([&] { submitter(0, a, ra); });
  std::thread tb([&] { submitter(1, b, rb); });
  ta.join();
  tb.join();
  stop = true;
  observer.join();
  CHECK(ra == Errc::kOk);
  CHECK(rb == Errc::kOk);
  CHECK(violations == 0);
  CHECK(load(region, kData) == kRounds);
  CHECK(load(region, kData + 64 + kData) == kRounds);
  CHECK(a.completed() == 2 * kRounds);
  CHECK(b.completed() == 2 * kRounds);
  CHECK(a.error() == Errc::kOk);
  CHECK(b.error() == Errc::kOk);
}
